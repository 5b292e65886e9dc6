package dev.fencing.verify.database;

import dev.fencing.jdbc.JdbcDialect;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Which database a URL names, its user, and the library's scripts with the run's table names. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DatabaseTest {

    @Test
    void theKindComesFromTheUrlAndTheUserFromItsParameterOrTheDefault() {
        Database pg = Database.of("jdbc:postgresql://127.0.0.1:5432/test");
        assertThat(pg.kind()).isEqualTo(DatabaseKind.POSTGRESQL);
        assertThat(pg.user()).isEqualTo("postgres");
        Database maria = Database.of("jdbc:mariadb://db.example:3307/shop?user=app&useSsl=false");
        assertThat(maria.kind()).isEqualTo(DatabaseKind.MARIADB);
        assertThat(maria.kind().dialect()).isEqualTo(JdbcDialect.MARIADB);
        assertThat(maria.user()).isEqualTo("app");
        assertThat(Database.of("JDBC:MariaDB://h/db").user()).isEqualTo("root");
    }

    @Test
    void anotherProductIsRefusedNamingTheUrl() {
        assertThatThrownBy(() -> Database.of("jdbc:mysql://h/db")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'jdbc:mysql://h/db'").hasMessageContaining("jdbc:mariadb:");
        assertThatThrownBy(() -> Database.of(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theScriptsAreTheLibrarysWithTheRunsTableName() {
        String fence = LibraryScripts.fenceTable(DatabaseKind.MARIADB, "verify_ab_fence");
        assertThat(fence).startsWith("CREATE TABLE IF NOT EXISTS verify_ab_fence (")
                .contains("utf8mb4_nopad_bin", "max_seen   BIGINT").doesNotContain("fencing_max_seen", "--");
        assertThat(LibraryScripts.leaseTable(DatabaseKind.POSTGRESQL, "verify_ab_lease"))
                .startsWith("CREATE TABLE IF NOT EXISTS verify_ab_lease (")
                .contains("expires_at TIMESTAMP WITH TIME ZONE").doesNotContain("fencing_lease", ";");
    }
}
