package dev.fencing.docs;

import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/** An in-memory H2 database of its own per call, with the shipped scripts of fencing-jdbc run on it. */
public final class Databases {

    private Databases() {
    }

    /** @param scripts names under dev/fencing/jdbc/ in fencing-jdbc's jar, e.g. {@code schema-h2.sql} */
    public static DataSource h2(String name, String... scripts) {
        DataSource dataSource = new SimpleDriverDataSource(new org.h2.Driver(),
                "jdbc:h2:mem:" + name + "-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", "");
        ResourceDatabasePopulator populator = new ResourceDatabasePopulator();
        for (String script : scripts) {
            populator.addScript(new ClassPathResource("dev/fencing/jdbc/" + script));
        }
        if (scripts.length > 0) {
            populator.execute(dataSource);
        }
        return dataSource;
    }
}
