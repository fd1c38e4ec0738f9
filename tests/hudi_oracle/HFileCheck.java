import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.zip.CRC32;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hudi.common.util.io.ByteBufferBackedInputStream;
import org.apache.hudi.io.ByteArraySeekableDataInputStream;
import org.apache.hudi.io.hfile.HFileReaderImpl;
import org.apache.hudi.io.hfile.UTF8StringKey;
import org.apache.hudi.org.apache.hadoop.hbase.Cell;
import org.apache.hudi.org.apache.hadoop.hbase.CellUtil;
import org.apache.hudi.org.apache.hadoop.hbase.KeyValue;
import org.apache.hudi.org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hudi.org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hudi.org.apache.hadoop.hbase.io.hfile.HFileScanner;

/**
 * Reads an HFile with HBase 2.4.9 (shaded in Hudi 0.15's Spark bundle) and, unless the second argument is
 * "hbase", with Hudi 0.15's native reader (org.apache.hudi.io.hfile.HFileReaderImpl, which reads single-level
 * indexes only); prints the entry count, the schema file info, the bloomFilter meta block's size, a CRC32 of
 * every row and value in scan order, and for each further argument the CRC32 of its value or MISSING.
 * Used by tests/hudi_oracle/test_hfile_java.py.
 */
public class HFileCheck {
  static String crcOf(byte[] v) { CRC32 c = new CRC32(); c.update(v); return Long.toHexString(c.getValue()); }

  public static void main(String[] args) throws Exception {
    String file = args[0];
    boolean both = !args[1].equals("hbase");
    Configuration conf = new Configuration();
    Path path = new Path(new java.io.File(file).getAbsolutePath());
    FileSystem fs = path.getFileSystem(conf);
    // 1. HBase
    HFile.Reader reader = HFile.createReader(fs, path, new CacheConfig(conf), true, conf);
    System.out.println("hbase.entries=" + reader.getEntries());
    System.out.println("hbase.schema=" + (reader.getHFileInfo().get("schema".getBytes()) == null ? "null"
        : new String(reader.getHFileInfo().get("schema".getBytes()))));
    ByteBuffer bloom = reader.getMetaBlock("bloomFilter", false) == null ? null
        : reader.getMetaBlock("bloomFilter", false).getBufferWithoutHeader().asSubByteBuffer(Integer.MAX_VALUE);
    System.out.println("hbase.bloomFilter.bytes=" + (bloom == null ? -1 : bloom.remaining()));
    HFileScanner scanner = reader.getScanner(false, false);
    CRC32 all = new CRC32();
    long n = 0;
    if (scanner.seekTo()) {
      do {
        Cell c = scanner.getCell();
        all.update(CellUtil.cloneRow(c));
        all.update(CellUtil.cloneValue(c));
        n++;
      } while (scanner.next());
    }
    System.out.println("hbase.scanned=" + n + " crc=" + Long.toHexString(all.getValue()));
    for (int i = 2; i < args.length; i++) {
      HFileScanner s = reader.getScanner(false, true);
      KeyValue kv = new KeyValue(args[i].getBytes("UTF-8"), null, null, null);
      int r = s.seekTo(kv);
      String got = r == 0 ? crcOf(CellUtil.cloneValue(s.getCell())) : "MISSING";
      System.out.println("hbase.get " + args[i] + " " + got);
    }
    reader.close();
    if (!both) {
      return;
    }
    // 2. Hudi's native reader
    byte[] content = Files.readAllBytes(Paths.get(file));
    HFileReaderImpl hudi = new HFileReaderImpl(
        new ByteArraySeekableDataInputStream(new ByteBufferBackedInputStream(content)), content.length);
    hudi.initializeMetadata();
    System.out.println("hudi.entries=" + hudi.getNumKeyValueEntries());
    all = new CRC32();
    n = 0;
    if (hudi.seekTo()) {
      do {
        org.apache.hudi.io.hfile.KeyValue kv = hudi.getKeyValue().get();
        byte[] b = kv.getBytes();
        all.update(b, kv.getKeyContentOffset(), kv.getKeyContentLength());
        all.update(b, kv.getValueOffset(), kv.getValueLength());
        n++;
      } while (hudi.next());
    }
    System.out.println("hudi.scanned=" + n + " crc=" + Long.toHexString(all.getValue()));
    hudi.close();
    for (int i = 2; i < args.length; i++) {
      HFileReaderImpl h = new HFileReaderImpl(
          new ByteArraySeekableDataInputStream(new ByteBufferBackedInputStream(content)), content.length);
      h.initializeMetadata();
      h.seekTo();
      int r = h.seekTo(new UTF8StringKey(args[i]));
      String got = "MISSING";
      if (r == 0) {
        org.apache.hudi.io.hfile.KeyValue kv = h.getKeyValue().get();
        byte[] v = java.util.Arrays.copyOfRange(kv.getBytes(), kv.getValueOffset(), kv.getValueOffset() + kv.getValueLength());
        got = crcOf(v);
      }
      System.out.println("hudi.get " + args[i] + " " + got);
      h.close();
    }
  }
}
