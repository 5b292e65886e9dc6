package dev.fencing.r2dbc;

/** {@link R2dbcFenceStoreContract} on the PostgreSQL server at 127.0.0.1:5432 ({@code r2dbc-postgresql}). */
class R2dbcFenceStorePostgresContractTest extends R2dbcFenceStoreContract {

    @Override
    String url() {
        return "r2dbc:postgresql://postgres@127.0.0.1:5432/test";
    }

    @Override
    R2dbcDialect dialect() {
        return R2dbcDialect.POSTGRESQL;
    }

    @Override
    String createIntegerMaxSeenTable(String table) {
        return "CREATE TABLE " + table + " (resource VARCHAR(256) NOT NULL PRIMARY KEY, max_seen INTEGER NOT NULL, "
                + "holder VARCHAR(256), updated_at TIMESTAMP WITH TIME ZONE NOT NULL)";
    }
}
