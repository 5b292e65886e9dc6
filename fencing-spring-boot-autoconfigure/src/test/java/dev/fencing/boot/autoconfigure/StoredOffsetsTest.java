package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.jdbc.JdbcIssuerBase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.mock.env.MockEnvironment;

import javax.sql.DataSource;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The stored offsets bound the admin operations: "none stored" comes only from a base table the database says is
 * missing. A table that cannot be read (another shape, a database down) failed the reset before, and now fails it
 * for every such failure (the constructor's failures were read as "none", and the reset ran unbounded).
 */
@Timeout(60)
class StoredOffsetsTest {

    private final DriverManagerDataSource dataSource = new DriverManagerDataSource(
            "jdbc:h2:mem:stored-offsets-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", "");

    @AfterEach
    void close() {
        new JdbcTemplate(dataSource).execute("SHUTDOWN");
    }

    /**
     * A missing table is none stored, and said at each admin operation (as the command line's note): a trial's old
     * instance, without the property naming the new one's base table, lowered a resource below the stored base.
     */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void aMissingTableIsNoneStoredAndSaidAndAStoredBaseIsRead(CapturedOutput output) {
        assertThat(StoredOffsets.forAdmin(beans(dataSource), table("fencing_issuer_base")).get()).isEmpty();
        assertThat(output.getAll()).contains("No issuer base table 'fencing_issuer_base' in this application's "
                + "database, so no issuer migration bounds this reset or floor raise", "fencing.issuer.offset.table");
        new JdbcIssuerBase(dataSource, "fencing_issuer_base", true).establish("to-zk", 1000);
        int before = output.getAll().length();
        assertThat(StoredOffsets.forAdmin(beans(dataSource), table("fencing_issuer_base")).get())
                .isEqualTo(Map.of("to-zk", 1000L));
        assertThat(output.getAll().substring(before)).doesNotContain("No issuer base table");
    }

    @Test
    void aTableThatCannotBeReadFailsTheAdminOperation() {
        new JdbcTemplate(dataSource).execute("CREATE TABLE misshapen (name VARCHAR(64) PRIMARY KEY, amount BIGINT)");
        assertThatThrownBy(() -> StoredOffsets.forAdmin(beans(dataSource), table("misshapen")).get())
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("misshapen");
        DataSource down = new DriverManagerDataSource("jdbc:h2:tcp://127.0.0.1:1/nowhere", "sa", "");
        assertThatThrownBy(() -> StoredOffsets.forAdmin(beans(down), table("fencing_issuer_base")).get())
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("cannot connect");
        // the startup checks' messages only: a read failure counts as none stored there
        assertThat(new StoredOffsets(beans(down), table("fencing_issuer_base")).get()).isEmpty();
    }

    private static StaticListableBeanFactory beans(DataSource dataSource) {
        StaticListableBeanFactory beans = new StaticListableBeanFactory();
        beans.addBean("dataSource", dataSource);
        return beans;
    }

    private static MockEnvironment table(String table) {
        return new MockEnvironment().withProperty("fencing.issuer.offset.table", table);
    }
}
