package dev.fencing.verify.run;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.verify.database.Database;
import dev.fencing.verify.database.DatabaseKind;
import dev.fencing.verify.nemesis.CompactNemesis;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import java.time.Duration;

/**
 * The compact nemesis's side of the runner: a {@link JdbcFenceAdmin} on the run's fence table (a store of its own,
 * {@code compacted(true)}, on a small pool of the store's database) and the issuer floors that fit the run's issuer:
 * {@link IssuerFloors#ONE_SEQUENCE} for ZooKeeper and etcd (one sequence for every resource), and for the JDBC lease,
 * which has a counter per resource, a {@link JdbcTokenIssuer} on the run's lease table, whose
 * {@code raiseFamilyFloor} makes the lease issue above a floor before the fence table raises it
 * ({@code ONE_SEQUENCE} would be unsafe there: the lease's low counters would be refused).
 */
final class FenceCompaction implements CompactNemesis.Compactor, AutoCloseable {

    /** Rows folded per batch. */
    static final int BATCH_SIZE = 100;

    private final HikariDataSource storePool;
    private final HikariDataSource leasePool;
    private final JdbcFenceAdmin admin;
    private final IssuerFloors floors;

    FenceCompaction(RunConfig config, String fenceTable, String leaseTable) {
        Database store = config.storeDatabase();
        this.storePool = pool(store, "compact-store");
        JdbcFenceStore fenceStore = JdbcFenceStore.builder(storePool).dialect(store.kind().dialect())
                .table(fenceTable).compacted(true)
                .transactionManager(new DataSourceTransactionManager(storePool)).build();
        this.admin = new JdbcFenceAdmin(fenceStore);
        Database lease = config.leaseDatabase();
        if (lease == null) {
            this.leasePool = null;
            this.floors = IssuerFloors.ONE_SEQUENCE;        // ZooKeeper's zxid, etcd's revision
        } else {
            this.leasePool = pool(lease, "compact-lease");
            this.floors = JdbcTokenIssuer.builder(leasePool).dialect(lease.kind().dialect()).table(leaseTable)
                    .leaseTime(config.lease()).name("lease table " + leaseTable).build();
        }
    }

    /** The floors the compactions raise the issuer's counters with (for the tests and the summary). */
    IssuerFloors floors() {
        return floors;
    }

    @Override
    public long compact(Duration idleFor) {
        return admin.compact(idleFor, BATCH_SIZE, floors).folded();
    }

    private static HikariDataSource pool(Database db, String name) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(db.url());
        c.setUsername(db.user());
        c.setMaximumPoolSize(2);
        c.setMinimumIdle(0);
        c.setConnectionTimeout(5_000);
        c.setPoolName(name);
        if (db.kind() == DatabaseKind.MARIADB) {
            c.setDriverClassName("org.mariadb.jdbc.Driver");
        }
        return new HikariDataSource(c);
    }

    @Override
    public void close() {
        storePool.close();
        if (leasePool != null) {
            leasePool.close();
        }
    }
}
