package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.spring.EnableFencing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * One application instance: its own Spring context and connection pool, a JDBC fence store on the shared database,
 * and a fenced repository. Several of these share one database as several deployed instances would.
 */
final class AppInstance implements AutoCloseable {

    @Configuration(proxyBeanMethods = false)
    @EnableFencing
    static class Fencing {
    }

    final AnnotationConfigApplicationContext context;

    AppInstance(Database database, String fenceTable, String dataTable) {
        HikariDataSource pool = database.newPool(4);
        context = new AnnotationConfigApplicationContext();
        context.registerBean("dataSource", HikariDataSource.class, () -> pool);
        context.registerBean(PlatformTransactionManager.class, () -> new DataSourceTransactionManager(pool));
        context.registerBean(MeterRegistry.class, SimpleMeterRegistry::new);
        context.registerBean(JdbcFenceStore.class, () -> JdbcFenceStore.builder(pool)
                .transactionManager(context.getBean(PlatformTransactionManager.class)).table(fenceTable).build());
        context.registerBean(NotesRepository.class, () -> new NotesRepository(pool, dataTable));
        context.register(Fencing.class);
        context.refresh();
    }

    NotesRepository notes() {
        return context.getBean(NotesRepository.class);
    }

    double checks(String outcome) {
        var counter = context.getBean(MeterRegistry.class).find("fencing.checks")
                .tag("resource", "notes").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Override
    public void close() {
        context.close();
    }
}
