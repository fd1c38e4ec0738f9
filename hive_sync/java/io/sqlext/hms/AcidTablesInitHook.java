package io.sqlext.hms;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.MetaStoreInitContext;
import org.apache.hadoop.hive.metastore.MetaStoreInitListener;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Metastore init hook (hive.metastore.init.hooks) of hive_sync.metastore: creates Hive's ACID transaction and
 * lock tables (TXNS, HIVE_LOCKS, NEXT_LOCK_ID, COMPACTION_QUEUE, ...) in the metastore's Derby database when they
 * are missing, through Hive's own TxnDbUtil.prepDb, so that the Thrift lock API (lock, check_lock, heartbeat,
 * unlock) works: Hudi's HiveMetastoreBasedLockProvider and hive_sync.lock_provider use it. DataNucleus creates
 * only the metadata tables (datanucleus.schema.autoCreateAll), and schematool's SQL scripts are not in the jars.
 * Tables that already exist are left alone.
 */
public class AcidTablesInitHook extends MetaStoreInitListener {
  private static final Logger LOG = LoggerFactory.getLogger(AcidTablesInitHook.class);

  public AcidTablesInitHook(Configuration conf) {
    super(conf);
  }

  @Override
  public void onInit(MetaStoreInitContext context) throws MetaException {
    Configuration conf = getConf();
    HiveConf hiveConf = conf instanceof HiveConf ? (HiveConf) conf : new HiveConf(conf, AcidTablesInitHook.class);
    try {
      TxnDbUtil.prepDb(hiveConf);
      LOG.info("created Hive's ACID transaction and lock tables");
    } catch (Exception e) {
      String message = String.valueOf(e.getMessage());
      if (message.contains("already exists")) {
        LOG.info("Hive's ACID transaction and lock tables exist");
        return;
      }
      throw new MetaException("cannot create Hive's ACID transaction and lock tables: " + e);
    }
  }
}
