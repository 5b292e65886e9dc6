package dev.fencing.r2dbc;

/** {@link R2dbcFenceStoreContract} on the MariaDB server at 127.0.0.1:3306 ({@code r2dbc-mariadb}). */
class R2dbcFenceStoreMariaDbContractTest extends R2dbcFenceStoreContract {

    @Override
    String url() {
        return "r2dbc:mariadb://root@127.0.0.1:3306/test";
    }

    @Override
    R2dbcDialect dialect() {
        return R2dbcDialect.MARIADB;
    }

    @Override
    String weakenTable(String table) {
        return "ALTER TABLE " + table + " ENGINE=Aria";
    }

    @Override
    String weakenedSays() {
        return "uses the Aria storage engine";
    }

    @Override
    String createIntegerMaxSeenTable(String table) {
        return "CREATE TABLE " + table + " (resource VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin "
                + "NOT NULL PRIMARY KEY, max_seen INTEGER NOT NULL, holder VARCHAR(256) CHARACTER SET utf8mb4 "
                + "COLLATE utf8mb4_nopad_bin, updated_at TIMESTAMP(6) NOT NULL)";
    }
}
