/*
 * sqlext: Hudi's bucket index hash as a Spark function.
 */
package io.sqlext.catalog;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import org.apache.spark.sql.api.java.UDF3;

/**
 * The bucket number of a record key, as Hudi 0.14/0.15's {@code BucketIdentifier.getBucketId(recordKey,
 * indexKeyFields, numBuckets)} computes it: {@code KeyGenUtils.extractRecordKeysByFields} (the key split on every
 * {@code ,} with Java's {@code String.split}, each part on its first {@code :}; a part without {@code :} kept whole,
 * a {@code field:value} part kept when {@code field} is a hash field or there are none; {@code __null__} as null and
 * {@code __empty__} as ""), then {@code (values.hashCode() & Integer.MAX_VALUE) % numBuckets} with Java's
 * {@code List.hashCode}. The engine registers it as a Java UDF ({@code engine.spark.index.bucket_id_column}) so
 * bucket numbers are computed in the JVM; its Python twin is {@code engine.index.bucket.bucket_id}.
 *
 * <p>Arguments: the record key, the hash fields joined with {@code ,} ("" for none), the number of buckets.
 * Returns null for a null key (the engine refuses null keys before hashing).
 */
public final class HudiBucketId implements UDF3<String, String, Integer, Integer> {

  private static final long serialVersionUID = 1L;

  private static final String NULL_PLACEHOLDER = "__null__";
  private static final String EMPTY_PLACEHOLDER = "__empty__";

  private transient String lastFields;
  private transient Set<String> fieldSet;

  @Override
  public Integer call(String recordKey, String hashFields, Integer numBuckets) {
    if (recordKey == null || numBuckets == null) {
      return null;
    }
    return (hash(recordKey, fields(hashFields)) & Integer.MAX_VALUE) % numBuckets;
  }

  private Set<String> fields(String hashFields) {
    String text = hashFields == null ? "" : hashFields;
    if (!text.equals(lastFields)) {
      fieldSet = text.isEmpty() ? Set.of() : new HashSet<>(Arrays.asList(text.split(",")));
      lastFields = text;
    }
    return fieldSet;
  }

  /** Java {@code List.hashCode} of the key's hash values. */
  static int hash(String recordKey, Set<String> fields) {
    int h = 1;
    for (String part : recordKey.split(",")) {
      int colon = part.indexOf(':');
      String value;
      if (colon < 0) {
        value = part;
      } else if (fields.isEmpty() || fields.contains(part.substring(0, colon))) {
        value = part.substring(colon + 1);
        if (value.equals(NULL_PLACEHOLDER)) {
          value = null;
        } else if (value.equals(EMPTY_PLACEHOLDER)) {
          value = "";
        }
      } else {
        continue;
      }
      h = 31 * h + (value == null ? 0 : value.hashCode());
    }
    return h;
  }
}
