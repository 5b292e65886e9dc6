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
        assertThat(table.find(copy, Account.class)).as("an equal copy is not the same instance")
                .isSameAs(FenceTable.MISS);
        assertThat(table.find(debit, SavingsAccount.class)).isSameAs(FenceTable.MISS);

        table.put(debit, Account.class, new Object());
        assertThat(table.find(debit, Account.class)).as("the first entry stays").isSameAs(fence);
        assertThat(table.size()).isEqualTo(1);
    }

    /** Distinct methods and classes: each public method of a few JDK types, paired with each of three classes. */
    private static List<Object[]> distinctPairs() {
        List<Object[]> pairs = new ArrayList<>();
        for (Class<?> owner : List.of(String.class, ArrayList.class, java.util.HashMap.class, StringBuilder.class)) {
            for (Method method : owner.getMethods()) {
                for (Class<?> type : List.of(Account.class, SavingsAccount.class, Object.class)) {
                    pairs.add(new Object[]{method, type});
                }
            }
        }
        return pairs;
    }

    @Test
    void growsWithoutLosingAnEntryAndStopsAtItsBound() {
        List<Object[]> pairs = distinctPairs();
        int bound = 256;
        assertThat(pairs).hasSizeGreaterThan(bound + 10);
        FenceTable table = new FenceTable(bound);
        List<Object> fences = new ArrayList<>();
        for (Object[] pair : pairs) {
            Object fence = new Object();
            fences.add(fence);
            table.put((Method) pair[0], (Class<?>) pair[1], fence);
        }
        assertThat(table.size()).isEqualTo(bound);
        for (int i = 0; i < pairs.size(); i++) {
            Object found = table.find((Method) pairs.get(i)[0], (Class<?>) pairs.get(i)[1]);
            assertThat(found).as("pair %d", i).isSameAs(i < bound ? fences.get(i) : FenceTable.MISS);
        }
    }

    @Test
    void newCopiesOfOneMethodTakeAFewEntriesAndLeaveRoomForOthers() throws Exception {
        FenceTable table = new FenceTable(16);
        List<Method> copies = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            Method copy = Account.class.getMethod("debit", long.class); // a new instance every time
            copies.add(copy);
            table.put(copy, Account.class, "debit");
        }
        assertThat(table.size()).isEqualTo(FenceTable.INSTANCES_PER_METHOD);
        for (int i = 0; i < copies.size(); i++) {
            assertThat(table.find(copies.get(i), Account.class))
                    .isSameAs(i < FenceTable.INSTANCES_PER_METHOD ? "debit" : FenceTable.MISS);
        }
        // the same method on another class, and another method, still get in
        table.put(copies.get(9_999), SavingsAccount.class, "savings");
        Method audit = Account.class.getMethod("audit");
        table.put(audit, Account.class, "audit");
        assertThat(table.find(copies.get(9_999), SavingsAccount.class)).isEqualTo("savings");
        assertThat(table.find(audit, Account.class)).isEqualTo("audit");
        assertThat(table.size()).isEqualTo(FenceTable.INSTANCES_PER_METHOD + 2);
    }

    @Test
    void readersRacingWritersFindEveryEntryOncePut() throws Exception {
        FenceTable table = new FenceTable();
        List<Object[]> pairs = distinctPairs();
        int count = pairs.size();
        Method[] methods = new Method[count];
        Class<?>[] types = new Class<?>[count];
        Object[] fences = new Object[count];
        for (int i = 0; i < count; i++) {
            methods[i] = (Method) pairs.get(i)[0];
            types[i] = (Class<?>) pairs.get(i)[1];
            fences[i] = new Object();
        }
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            CountDownLatch start = new CountDownLatch(1);
            Future<?> writer = pool.submit(() -> {
                start.await();
                for (int i = 0; i < count; i++) {
                    table.put(methods[i], types[i], fences[i]);
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
                            Object found = table.find(methods[i], types[i]);
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
            assertThat(table.size()).isEqualTo(count);
            for (int i = 0; i < count; i++) {
                assertThat(table.find(methods[i], types[i])).isSameAs(fences[i]);
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
        // the startup check's copy came first; the proxy's own instance is remembered beside it
        assertThat(points.table().find(debit, Account.class)).isSameAs(fence);
        assertThat(points.table().find(copy, Account.class)).isSameAs(fence);
        assertThat(points.fenceFor(debit, SavingsAccount.class)).as("its own point per target class")
                .isNotNull().isNotSameAs(fence);
        Method audit = Account.class.getMethod("audit");
        assertThat(points.fenceFor(audit, Account.class)).isNull();
        assertThat(points.fenceFor(audit, Account.class)).as("an unfenced method stays unfenced").isNull();
        assertThat(points.fenceFor(debit, null)).as("no class: the declaring class").isSameAs(fence);
    }
}
