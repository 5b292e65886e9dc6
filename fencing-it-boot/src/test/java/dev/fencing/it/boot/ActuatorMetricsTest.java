package dev.fencing.it.boot;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import javax.sql.DataSource;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @EnableFencing} in a real Spring Boot 4 application with Actuator, a Prometheus registry and a Hikari pool
 * must leave the host application as it was: the standard series ({@code jvm_*}, {@code process_*},
 * {@code hikaricp_*}) and the common tags stay in the scrape, and no bean is created too early to be post-processed.
 * The fence store here depends on the {@code DataSource}, as the JDBC store does.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ActuatorMetricsTest {

    private static final String NOT_ELIGIBLE = "is not eligible for getting processed by all BeanPostProcessors";

    /** A store that needs the application's DataSource, like the JDBC store; checks in memory. */
    static final class DataSourceStore implements FenceStore {
        final DataSource dataSource;
        final InMemoryFenceStore delegate = new InMemoryFenceStore();

        DataSourceStore(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
            return delegate.fence(resource, token, write);
        }
    }

    static class Accounts {
        final List<Long> deposits = new CopyOnWriteArrayList<>();

        @Fenced(resource = "accounts", key = "#accountId")
        public void deposit(long accountId, long amount) {
            deposits.add(amount);
        }

    }

    static class Transfers {
        final Accounts accounts;

        Transfers(Accounts accounts) {
            this.accounts = accounts;
        }

        @Fenced(resource = "accounts", key = "#accountId", acquire = true)
        public void transfer(long accountId, long amount) {
            accounts.deposit(accountId, amount); // through the proxy: checked
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableFencing
    static class App {
        @Bean
        DataSourceStore fenceStore(DataSource dataSource) {
            return new DataSourceStore(dataSource);
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        Accounts accounts() {
            return new Accounts();
        }

        @Bean
        Transfers transfers(Accounts accounts) {
            return new Transfers(accounts);
        }
    }

    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private ConfigurableApplicationContext context;

    @BeforeAll
    void start() throws Exception {
        context = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties(Map.of(
                        "spring.datasource.url", "jdbc:h2:mem:fencing-it-boot;DB_CLOSE_DELAY=-1",
                        "management.metrics.tags.application", "fencing-it",
                        "spring.main.banner-mode", "off",
                        // this application has no repositories or migrations: the proof application's (package
                        // app, below this one, with Spring Data and Flyway on the module's classpath) stay out
                        "spring.data.jdbc.repositories.enabled", "false",
                        "spring.data.jpa.repositories.enabled", "false",
                        "spring.flyway.enabled", "false"))
                // after Boot has initialized logging, before the context refreshes
                .initializers(ctx -> captureLogs())
                .run();
        try (Connection ignored = context.getBean(DataSource.class).getConnection()) {
            // starts the pool: Hikari registers its meters now
        }
    }

    @AfterAll
    void stop() {
        if (context != null) {
            context.close();
        }
        ((Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
    }

    private void captureLogs() {
        Logger root = ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(Logger.ROOT_LOGGER_NAME);
        logs.start();
        root.addAppender(logs);
    }

    @Test
    void standardSeriesAndCommonTagsStayInThePrometheusScrape() {
        String scrape = context.getBean(PrometheusMeterRegistry.class).scrape();
        assertThat(scrape).contains("jvm_memory_used_bytes{").contains("jvm_threads_live_threads{")
                .contains("process_cpu_usage{").contains("hikaricp_connections{").contains("jdbc_connections_max{")
                .contains("application=\"fencing-it\"");
        assertThat(scrape.lines().filter(line -> line.startsWith("jvm_memory_used_bytes{")))
                .isNotEmpty().allSatisfy(line -> assertThat(line).contains("application=\"fencing-it\""));
        assertThat(scrape.lines().filter(line -> line.startsWith("hikaricp_connections{")))
                .isNotEmpty().allSatisfy(line -> assertThat(line).contains("application=\"fencing-it\""));
    }

    @Test
    void noBeanIsCreatedTooEarlyForThePostProcessors() {
        assertThat(logs.list).as("the capture works: Boot logs its startup").isNotEmpty();
        List<String> notEligible = logs.list.stream().map(ILoggingEvent::getFormattedMessage)
                .filter(message -> message.contains(NOT_ELIGIBLE)).toList();
        assertThat(notEligible).isEmpty();
    }

    @Test
    void theFenceWorksAndIsCountedWithTheCommonTag() {
        Accounts accounts = context.getBean(Accounts.class);
        context.getBean(Transfers.class).transfer(7, 100); // acquires, and its deposit is checked
        FencingContext.run(new FencingToken("accounts:8", 5, "h"), () -> accounts.deposit(8, 1));
        assertThat(context.getBean(PrometheusMeterRegistry.class).scrape())
                .contains("fencing_checks_total{application=\"fencing-it\",enforced=\"true\",exception=\"none\","
                        + "outcome=\"accepted\",resource=\"accounts\"} 2.0")
                .contains("fencing_acquisitions_total{application=\"fencing-it\",exception=\"none\","
                        + "outcome=\"acquired\",resource=\"accounts\"} 1.0");
        // Boot's ObservationRegistry reaches the guard: the checks and the wait for the lock are timed
        MeterRegistry meters = context.getBean(MeterRegistry.class);
        assertThat(meters.get("fencing.check").tag("resource", "accounts").tag("outcome", "accepted").timer().count())
                .isEqualTo(2);
        assertThat(meters.get("fencing.acquire").tag("resource", "accounts").tag("outcome", "acquired").timer()
                .count()).isEqualTo(1);
        assertThat(context.getBean(PrometheusMeterRegistry.class).scrape())
                .contains("fencing_acquire_seconds_count{application=\"fencing-it\",error=\"none\","
                        + "outcome=\"acquired\",resource=\"accounts\"} 1");
    }
}
