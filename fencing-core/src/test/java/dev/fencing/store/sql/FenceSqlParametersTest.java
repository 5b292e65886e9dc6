package dev.fencing.store.sql;

import dev.fencing.rule.FenceRule;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Each check statement's parameters match its markers, and the statement that reads no family floor cannot be given a
 * resource that has a family (its floor would go unread).
 */
@Timeout(10)
class FenceSqlParametersTest {

    @ParameterizedTest
    @EnumSource(FenceSql.class)
    void everyStatementHasAParameterForEachMarker(FenceSql sql) {
        assertThat(markers(sql.checkSql("t", FenceRule.UNBOUNDED)))
                .isEqualTo(markers(sql.checkSql("t", 10)))
                .isEqualTo(sql.checkParameters("orders:1", 5, "h").length)
                .isEqualTo(sql.checkParameters("orders", 5, "h").length);
        assertThat(markers(sql.familylessCheckSql("t", FenceRule.UNBOUNDED)))
                .isEqualTo(markers(sql.familylessCheckSql("t", 10)))
                .isEqualTo(FenceSql.familylessCheckParameters("orders", 5, "h").length);
        if (sql.checksAtCommit()) {
            assertThat(markers(sql.checksAtCommitSql("t", "5000", 10, 2)))
                    .isEqualTo(2 * sql.atCommitParameters("orders:1", 5, "h").length);
        }
    }

    @Test
    void postgresqlsRestoringChecksKeepTheParametersAndPutTheBoundBack() {
        FenceSql sql = FenceSql.POSTGRESQL;
        String keyed = sql.restoringCheckSql("t", 10);
        String familyless = sql.restoringFamilylessCheckSql("t", 10);
        assertThat(markers(keyed)).isEqualTo(sql.checkParameters("orders:1", 5, "h").length);
        assertThat(markers(familyless)).isEqualTo(FenceSql.familylessCheckParameters("orders", 5, "h").length);
        for (String statement : new String[] {keyed, familyless}) {
            assertThat(statement).contains("RETURNING max_seen, holder, set_config('lock_timeout', CASE WHEN ")
                    .endsWith("set_config('fencing.lock_depth', CAST(GREATEST(CAST(COALESCE(NULLIF(current_setting("
                            + "'fencing.lock_depth', true), ''), '0') AS INTEGER) - 1, 0) AS TEXT), true)")
                    .contains("max_seen <= 10").doesNotContain(";");
        }
        // on a row of its own the bound counts from the higher of max_seen and the family floor
        assertThat(keyed).contains("p.token - GREATEST(f.max_seen, COALESCE((SELECT b.max_seen FROM t b WHERE "
                + "b.resource = p.floor_key), 0)) <= 10");
        assertThat(familyless).contains("EXCLUDED.max_seen - f.max_seen <= 10");
        assertThat(sql.swapInLockTimeoutSql("5000ms")).startsWith("SELECT set_config('fencing.lock_timeout', "
                + "CASE WHEN d.depth = 0 THEN current_setting('lock_timeout') ELSE").contains(
                "set_config('lock_timeout', '5000ms', true) FROM (SELECT CAST(").doesNotContain(";");
        assertThat(sql.swapInLockTimeoutSql("1'; DROP TABLE t; --")).contains("'1''; DROP TABLE t; --'");
        assertThatThrownBy(() -> FenceSql.MARIADB.restoringCheckSql("t", 10))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThat(FenceSql.MARIADB.checkSql("t", java.time.Duration.ofMillis(1500), 10))
                .startsWith("SET STATEMENT innodb_lock_wait_timeout=2, lock_wait_timeout=2 FOR INSERT");
    }

    @Test
    void theCheckWithoutAFloorRefusesAResourceWithAFamily() {
        assertThat(FenceSql.familylessCheckParameters("orders", 5, "h")).containsExactly("orders", 5L, "h");
        assertThatThrownBy(() -> FenceSql.familylessCheckParameters("orders:1", 5, "h"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'orders:1'").hasMessageContaining("orders");
    }

    @Test
    void postgresqlsUpdatePathIsGivenTheTokenHolderAndFloorKeyAgain() {
        assertThat(FenceSql.POSTGRESQL.checkParameters("orders:1", 5, "h"))
                .containsExactly("orders:1", 5L, "h", FenceSql.floorKeyOf("orders:1"), 5L, "h",
                        FenceSql.floorKeyOf("orders:1"));
        assertThat(FenceSql.MARIADB.checkParameters("orders", 5, null))
                .containsExactly("orders", 5L, null, null);
    }

    private static int markers(String sql) {
        return (int) sql.chars().filter(c -> c == '?').count();
    }

    /** MariaDB applies a lock wait bound in whole seconds, rounded up: a bound it cannot apply as given is said. */
    @org.junit.jupiter.api.Test
    void aLockTimeoutMariaDbRoundsUpIsSaidAndOthersAreNot() {
        org.assertj.core.api.Assertions.assertThat(FenceSql.MARIADB.lockTimeoutRounding("R2dbcFenceStore", "t",
                java.time.Duration.ofMillis(200))).isEqualTo("R2dbcFenceStore on table 't': lockTimeout 200 ms waits "
                + "up to 1 s on MariaDB, whose lock wait bounds take whole seconds (rounded up); give a whole number "
                + "of seconds to say what it waits");
        org.assertj.core.api.Assertions.assertThat(FenceSql.MARIADB.lockTimeoutRounding("s", "t",
                java.time.Duration.ofMillis(2500))).contains("waits up to 3 s");
        org.assertj.core.api.Assertions.assertThat(FenceSql.MARIADB.lockTimeoutRounding("s", "t",
                java.time.Duration.ofSeconds(5))).isNull();
        org.assertj.core.api.Assertions.assertThat(FenceSql.POSTGRESQL.lockTimeoutRounding("s", "t",
                java.time.Duration.ofMillis(200))).isNull();
    }
}
