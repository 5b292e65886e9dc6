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

    /** MariaDB's default collation makes 'Ab' and 'aB' one row: refused, as the JDBC store refuses it. */
    @org.junit.jupiter.api.Test
    void verifyRefusesACaseInsensitiveResourceColumn() {
        String table = uniqueTable("ci");
        db.sql("CREATE TABLE " + table + " (resource VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci "
                + "NOT NULL PRIMARY KEY, max_seen BIGINT NOT NULL, holder VARCHAR(256), updated_at TIMESTAMP(6) "
                + "NOT NULL)").then().block(java.time.Duration.ofSeconds(30));
        try {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> R2dbcFenceStore.builder(pool).table(table)
                            .build().verify())
                    .isInstanceOf(dev.fencing.FencingConfigurationException.class)
                    .hasMessageContaining("column 'resource' compares case-insensitively")
                    // the statement operations.md promises, not only "recreate" (a new user's trial)
                    .hasMessageContaining("ALTER TABLE " + table + " MODIFY resource VARCHAR(256) CHARACTER SET "
                            + "utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL (and the same for 'holder')");
            // and that statement is the fix
            db.sql("ALTER TABLE " + table + " MODIFY resource VARCHAR(256) CHARACTER SET utf8mb4 COLLATE "
                    + "utf8mb4_nopad_bin NOT NULL").then().block(java.time.Duration.ofSeconds(30));
            R2dbcFenceStore.builder(pool).table(table).build().verify();
        } finally {
            db.sql("DROP TABLE IF EXISTS " + table).then().block(java.time.Duration.ofSeconds(30));
        }
    }

    /**
     * utf8mb4_uca1400_nopad_as_cs is case- and accent-sensitive and no-pad, but compares a composed \u00c5 equal to A
     * and a combining ring, and ignores a zero-width space: two resources would share one row. Refused, as in JDBC.
     */
    @org.junit.jupiter.api.Test
    void verifyRefusesAColumnThatFoldsCanonicalEquivalents() {
        String table = uniqueTable("uca");
        db.sql("CREATE TABLE " + table + " (resource VARCHAR(256) CHARACTER SET utf8mb4 COLLATE "
                + "utf8mb4_uca1400_nopad_as_cs NOT NULL PRIMARY KEY, max_seen BIGINT NOT NULL, holder VARCHAR(256), "
                + "updated_at TIMESTAMP(6) NOT NULL)").then().block(java.time.Duration.ofSeconds(30));
        try {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> R2dbcFenceStore.builder(pool).table(table)
                            .build().verify())
                    .isInstanceOf(dev.fencing.FencingConfigurationException.class)
                    .hasMessageContaining("column 'resource' compares canonically equivalent spellings as one")
                    .hasMessageContaining("utf8mb4_nopad_bin");
        } finally {
            db.sql("DROP TABLE IF EXISTS " + table).then().block(java.time.Duration.ofSeconds(30));
        }
    }

    /** A key on a prefix of resource makes resources sharing the prefix share one row: refused, as in JDBC. */
    @org.junit.jupiter.api.Test
    void verifyRefusesAKeyOnAPrefixOfResource() {
        String table = uniqueTable("prefix");
        db.sql("CREATE TABLE " + table + " (resource VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin "
                + "NOT NULL, max_seen BIGINT NOT NULL, holder VARCHAR(256) CHARACTER SET utf8mb4 COLLATE "
                + "utf8mb4_nopad_bin, updated_at TIMESTAMP(6) NOT NULL, PRIMARY KEY (resource(64)))")
                .then().block(java.time.Duration.ofSeconds(30));
        try {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> R2dbcFenceStore.builder(pool).table(table)
                            .build().verify())
                    .isInstanceOf(dev.fencing.FencingConfigurationException.class)
                    .hasMessageContaining("with a key on a prefix");
        } finally {
            db.sql("DROP TABLE IF EXISTS " + table).then().block(java.time.Duration.ofSeconds(30));
        }
    }

    /** A second unique key (on holder) would let one resource's check update another's row: refused, as in JDBC. */
    @org.junit.jupiter.api.Test
    void verifyRefusesAnotherUniqueKey() {
        String table = uniqueTable("otherkey");
        db.sql("CREATE TABLE " + table + " (resource VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin "
                + "NOT NULL PRIMARY KEY, max_seen BIGINT NOT NULL, holder VARCHAR(256) CHARACTER SET utf8mb4 COLLATE "
                + "utf8mb4_nopad_bin, updated_at TIMESTAMP(6) NOT NULL, UNIQUE KEY by_holder (holder))")
                .then().block(java.time.Duration.ofSeconds(30));
        try {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> R2dbcFenceStore.builder(pool).table(table)
                            .build().verify())
                    .isInstanceOf(dev.fencing.FencingConfigurationException.class)
                    .hasMessageContaining("has a unique key on (holder) besides");
        } finally {
            db.sql("DROP TABLE IF EXISTS " + table).then().block(java.time.Duration.ofSeconds(30));
        }
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
