package dev.fencing.spring.support;

import dev.fencing.annotation.Fenced;
import dev.fencing.guard.FenceGuard;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The identity-keyed table of built fences: a hit needs the very {@code Method} instance and class that were put,
 * an equal {@code Method} copy is answered by the equality-keyed cache with the same fence, and the table stays
 * bounded.
 */
@Timeout(30)
class FenceTableTest {

    static class Account {
        @Fenced(resource = "accounts-table-test")
        public void debit(long amount) {
        }

        public void audit() {
        }
    }

    static class SavingsAccount extends Account {
    }

    @Test
    void aHitNeedsTheSameMethodInstanceAndClass() throws Exception {
        FenceTable table = new FenceTable();
        Method debit = Account.class.getMethod("debit", long.class);
        Method copy = Account.class.getMethod("debit", long.class);
        assertThat(copy).isEqualTo(debit).isNotSameAs(debit);
        Object fence = new Object();

        assertThat(table.find(debit, Account.class)).isSameAs(FenceTable.MISS);
        table.put(debit, Account.class, fence);

        assertThat(table.find(debit, Account.class)).isSameAs(fence);
        assertThat(table.find(copy, Account.class)).as("an equal copy is not the same instance").isSameAs(FenceTable.MISS);
        assertThat(table.find(debit, SavingsAccount.class)).isSameAs(FenceTable.MISS);

        table.put(debit, Account.class, new Object());
        assertThat(table.find(debit, Account.class)).as("the first entry stays").isSameAs(fence);
        assertThat(table.size()).isEqualTo(1);
    }

    @Test
    void growsWithoutLosingAnEntryAndStopsAtItsBound() throws Exception {
        FenceTable table = new FenceTable();
        List<Method> methods = new ArrayList<>();
        List<Object> fences = new ArrayList<>();
        for (int i = 0; i < FenceTable.MAX_ENTRIES + 10; i++) {
            // a new Method instance every time: getMethod returns a copy
            methods.add(Account.class.getMethod(i % 2 == 0 ? "debit" : "audit", i % 2 == 0 ? new Class<?>[]{long.class} : new Class<?>[0]));
            fences.add(new Object());
            table.put(methods.get(i), Account.class, fences.get(i));
        }
        assertThat(table.size()).isEqualTo(FenceTable.MAX_ENTRIES);
        for (int i = 0; i < FenceTable.MAX_ENTRIES; i++) {
            assertThat(table.find(methods.get(i), Account.class)).as("entry %d", i).isSameAs(fences.get(i));
        }
        for (int i = FenceTable.MAX_ENTRIES; i < methods.size(); i++) {
            assertThat(table.find(methods.get(i), Account.class)).isSameAs(FenceTable.MISS);
        }
    }

    @Test
    void readersRacingWritersFindEveryEntryOncePut() throws Exception {
        FenceTable table = new FenceTable();
        int count = 2_000;
        Method[] methods = new Method[count];
        Object[] fences = new Object[count];
        for (int i = 0; i < count; i++) {
            methods[i] = Account.class.getMethod("debit", long.class);
            fences[i] = new Object();
        }
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            CountDownLatch start = new CountDownLatch(1);
            Future<?> writer = pool.submit(() -> {
                start.await();
                for (int i = 0; i < count; i++) {
                    table.put(methods[i], Account.class, fences[i]);
                }
                return null;
            });
            List<Future<Integer>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                readers.add(pool.submit(() -> {
                    start.await();
                    int wrong = 0;
                    while (!writer.isDone()) {
                        for (int i = 0; i < count; i++) {
                            Object found = table.find(methods[i], Account.class);
                            if (found != FenceTable.MISS && found != fences[i]) {
                                wrong++;
                            }
                        }
                    }
                    return wrong;
                }));
            }
            start.countDown();
            writer.get(20, TimeUnit.SECONDS);
            for (Future<Integer> reader : readers) {
                assertThat(reader.get(20, TimeUnit.SECONDS)).as("a fence found for another method").isZero();
            }
            for (int i = 0; i < count; i++) {
                assertThat(table.find(methods[i], Account.class)).isSameAs(fences[i]);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void equalMethodInstancesGetOneFenceAndUnfencedMethodsNone() throws Exception {
        FencingMetrics metrics = FencingMetrics.noop();
        FencePointSource points = new FencePointSource(new FenceResolutions(), metrics,
                new FenceGuard(new InMemoryFenceStore()));
        Method debit = Account.class.getMethod("debit", long.class);
        Method copy = Account.class.getMethod("debit", long.class);

        Object fence = points.fenceFor(debit, Account.class);
        assertThat(fence).isNotNull();
        assertThat(points.fenceFor(debit, Account.class)).isSameAs(fence);
        assertThat(points.fenceFor(copy, Account.class)).as("another Method instance, the same point").isSameAs(fence);
        assertThat(points.fenceFor(copy, Account.class)).isSameAs(fence);
        assertThat(points.fenceFor(debit, SavingsAccount.class)).as("its own point per target class")
                .isNotNull().isNotSameAs(fence);
        Method audit = Account.class.getMethod("audit");
        assertThat(points.fenceFor(audit, Account.class)).isNull();
        assertThat(points.fenceFor(audit, Account.class)).as("an unfenced method stays unfenced").isNull();
        assertThat(points.fenceFor(debit, null)).as("no class: the declaring class").isSameAs(fence);
    }
}
