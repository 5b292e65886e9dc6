package dev.fencing.spring.support;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One interface {@code Method} on two beans of two classes fenced as two resources (JDK proxies, the class-level
 * {@code @Fenced} of each implementation), its first calls racing from many threads in a fresh context: the fence
 * each interceptor remembers ({@code Known}), the identity table and the per-class cache are filled concurrently,
 * and every call must be fenced by its own bean's resource, keyed by its own argument, never the other's.
 */
@Timeout(120)
class FirstCallRaceTest {

    public interface Writer {
        String write(long id);
    }

    @Fenced(resource = "alpha", key = "#id")
    public static class Alpha implements Writer {
        @Override
        public String write(long id) {
            return "alpha " + id;
        }
    }

    @Fenced(resource = "beta")
    public static class Beta implements Writer {
        @Override
        public String write(long id) {
            return "beta " + id;
        }
    }

    @Configuration
    @EnableFencing
    static class Config {
        @Bean
        Writer alpha() {
            return new Alpha();
        }

        @Bean
        Writer beta() {
            return new Beta();
        }

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }
    }

    @Test
    void racingFirstCallsOfOneMethodOnTwoClassesAreEachFencedByTheirOwnResource() throws Exception {
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 15; round++) {
                try (AnnotationConfigApplicationContext context =
                             new AnnotationConfigApplicationContext(Config.class)) {
                    Writer alpha = context.getBean("alpha", Writer.class);
                    Writer beta = context.getBean("beta", Writer.class);
                    InMemoryFenceStore store = context.getBean(InMemoryFenceStore.class);
                    CyclicBarrier start = new CyclicBarrier(threads);
                    List<Future<String>> calls = new ArrayList<>();
                    for (int t = 0; t < threads; t++) {
                        int n = t;
                        calls.add(pool.submit(() -> {
                            boolean onAlpha = n % 2 == 0;
                            // each thread binds only the token of its own bean's resource
                            FencingToken token = onAlpha ? new FencingToken("alpha:" + n, 10 + n, "h" + n)
                                    : new FencingToken("beta", 10 + n, "h" + n);
                            start.await(10, TimeUnit.SECONDS);
                            try {
                                return FencingContext.call(token, () -> (onAlpha ? alpha : beta).write(n));
                            } catch (StaleTokenException e) {
                                // beta is one resource: a lower token that comes after a higher one is refused
                                return onAlpha ? "alpha refused" : "beta " + n + " stale";
                            }
                        }));
                    }
                    List<String> results = new ArrayList<>();
                    for (Future<String> call : calls) {
                        results.add(call.get(30, TimeUnit.SECONDS));
                    }
                    for (int n = 0; n < threads; n++) {
                        assertThat(results.get(n)).as("round %d, call %d", round, n)
                                .isIn(n % 2 == 0 ? List.of("alpha " + n)
                                        : List.of("beta " + n, "beta " + n + " stale"));
                    }
                    for (int n = 0; n < threads; n += 2) {
                        assertThat(store.maxSeen("alpha:" + n)).hasValue(10 + n);
                    }
                    assertThat(store.maxSeen("beta")).isPresent();
                    assertThat(store.maxSeen("beta").getAsLong()).isIn(11L, 13L, 15L, 17L);
                    assertThat(store.maxSeen("alpha")).isEmpty();
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
