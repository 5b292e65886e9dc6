package dev.fencing.docs.plain;

// tag::imports[]
import dev.fencing.aspectj.FencingAspect;                 // fencing-aspect
import dev.fencing.context.FencingContext;                // fencing-core
import dev.fencing.context.FencingPropagation;
import dev.fencing.context.FencingScope;
import dev.fencing.context.TokenUse;
import dev.fencing.guard.FenceGuard;
import dev.fencing.issuer.Lease;
import dev.fencing.jdbc.JdbcFenceStore;                   // fencing-jdbc
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.spring.support.FencingSupport;         // fencing-spring, which fencing-aspect brings
import dev.fencing.token.FencingToken;
import org.springframework.jdbc.core.JdbcTemplate;        // spring-jdbc, which fencing-jdbc brings
import org.springframework.jdbc.datasource.DataSourceUtils;
// end::imports[]

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.context.MissingTokenException;
import dev.fencing.docs.Databases;
import dev.fencing.rule.StaleTokenException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.aspectj.lang.Aspects;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** docs/plain-java.md: the library without a Spring context, each snippet run against H2. */
@Timeout(60)
class PlainJavaTest {

    private final DataSource dataSource = Databases.h2("plain", "schema-h2.sql", "lease-h2.sql");
    private final JdbcTemplate sql = new JdbcTemplate(dataSource);

    PlainJavaTest() {
        sql.execute("CREATE TABLE stock (sku VARCHAR(40) PRIMARY KEY, qty INT NOT NULL)");
        sql.update("INSERT INTO stock (sku, qty) VALUES ('widget', 0)");
    }

    private JdbcFenceStore store() {
        // tag::setup[]
        JdbcFenceStore store = JdbcFenceStore.builder(dataSource).build(); // checks in transactions on dataSource
        store.verify();                                                    // at startup: the table is usable
        // end::setup[]
        return store;
    }

    @Test
    void aCheckedWriteRunsInTheChecksTransaction() throws Throwable {
        JdbcFenceStore store = store();
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(dataSource).build();
        // tag::check[]
        try (Lease lease = issuer.acquire("stock:widget", Duration.ofSeconds(5));
             FencingScope scope = FencingContext.bind(lease.token())) {
            FencingToken token = FencingContext.present("stock:widget"); // null when none is bound: refused
            store.fence("stock:widget", token, () -> {
                // a JdbcTemplate on the store's DataSource writes in the check's transaction
                return new JdbcTemplate(dataSource).update("UPDATE stock SET qty = ? WHERE sku = ?", 200, "widget");
            });
        }
        // end::check[]
        assertThat(sql.queryForObject("SELECT qty FROM stock WHERE sku = 'widget'", Integer.class)).isEqualTo(200);
        assertThatThrownBy(() -> store.fence("stock:widget", FencingContext.present("stock:widget"), () -> 1))
                .isInstanceOf(MissingTokenException.class).hasMessageContaining("'stock:widget'");
    }

    @Test
    void aConnectionOfTheTransactionRollsBackWithARefusal() throws Throwable {
        JdbcFenceStore store = store();
        store.fence("stock:widget", new FencingToken("stock:widget", 9, "b"), () -> 1);
        FencingToken stale = new FencingToken("stock:widget", 8, "a");
        assertThatThrownBy(() -> store.fence("stock:widget", stale, () -> {
            // tag::connection[]
            Connection connection = DataSourceUtils.getConnection(dataSource); // the check's transaction's own
            try (PreparedStatement update = connection.prepareStatement("UPDATE stock SET qty = ? WHERE sku = ?")) {
                update.setInt(1, 100);
                update.setString(2, "widget");
                update.executeUpdate();
            } finally {
                DataSourceUtils.releaseConnection(connection, dataSource); // not close(): the transaction owns it
            }
            // end::connection[]
            return null;
        })).isInstanceOf(StaleTokenException.class);
        assertThat(sql.queryForObject("SELECT qty FROM stock WHERE sku = 'widget'", Integer.class)).isZero();
    }

    @Test
    void aLeaseKnownLostIsRefusedBeforeTheStore() throws Throwable {
        JdbcFenceStore store = store();
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(dataSource).leaseTime(Duration.ofMillis(300)).build();
        assertThatThrownBy(() -> {
            // tag::lost[]
            try (Lease lease = issuer.acquire("stock:widget", Duration.ofSeconds(5))) {
                TokenUse use = TokenUse.open(lease.token(), lease::isLost); // found by the bind below
                try (FencingScope scope = FencingContext.bind(lease.token())) {
                    pauseLongerThanTheLease(); // a GC, a stopped process: the lease ends meanwhile
                    FencingToken token = FencingContext.present("stock:widget"); // the lease is lost: refused
                    store.fence("stock:widget", token, () -> new JdbcTemplate(dataSource).update(
                            "UPDATE stock SET qty = ? WHERE sku = ?", 300, "widget"));
                } finally {
                    use.close(); // when the lease ends
                }
            }
            // end::lost[]
        }).isInstanceOf(StaleTokenException.class).satisfies(
                refused -> assertThat(((StaleTokenException) refused).lockLost()).isTrue());
        assertThat(sql.queryForObject("SELECT qty FROM stock WHERE sku = 'widget'", Integer.class)).isZero();
    }

    private static void pauseLongerThanTheLease() throws InterruptedException {
        Thread.sleep(500);
    }

    @Test
    void theTokenTravelsWithAWrappedExecutor() throws Exception {
        JdbcFenceStore store = store();
        // tag::threads[]
        ExecutorService executor = FencingPropagation.executorService(Executors.newFixedThreadPool(4));
        // end::threads[]
        try (FencingScope scope = FencingContext.bind(new FencingToken("stock:widget", 3, "h"))) {
            assertThat(executor.submit(() -> {
                try {
                    return store.fence("stock:widget", FencingContext.present("stock:widget"), () -> 1);
                } catch (Throwable t) {
                    throw new Exception(t);
                }
            }).get(10, TimeUnit.SECONDS)).isEqualTo(1);
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void theWovenAspectIsConfiguredWithTheCheckOfItsClasses() {
        JdbcFenceStore store = store();
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(dataSource).build();
        SimpleMeterRegistry meterRegistry = new SimpleMeterRegistry();
        // tag::woven[]
        FenceGuard guard = FenceGuard.builder(store).issuer(issuer).build(); // the issuer for acquire = true
        FencingSupport support = new FencingSupport(guard, new FencingMetrics(meterRegistry));
        // the packages of your woven classes: checked first, as @EnableFencing(mode = ASPECTJ) checks them
        FencingAspect.aspectOf().configure(support, "dev.fencing.docs.plain");
        // end::woven[]
        assertThat(Aspects.aspectOf(FencingAspect.class).isConfigured()).isTrue();
        Aspects.aspectOf(FencingAspect.class).detach(support);
    }
}
