package dev.fencing.benchmarks;

import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.openjdk.jol.info.GraphLayout;
import org.openjdk.jol.util.Multiset;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The heap an {@link InMemoryFenceStore} retains per resource once it has accepted a token for each of N distinct
 * resources ({@code accounts:<n>}, default 10^6): measured twice, as the retained heap from {@link MemoryMXBean}
 * after repeated {@code System.gc()}, and as the store's object graph walked by JOL, split by class (map node, slot,
 * its lock's sync, key string and its bytes, the map's table). Two runs: every token with one holder text (one
 * process holding many locks), and each resource with a holder text of its own, which the slot then keeps.
 *
 * <p>Not a JMH benchmark: run as {@code java -Xmx2g -cp fencing-benchmarks/target/benchmarks.jar
 * dev.fencing.benchmarks.InMemoryFootprint [resources]}.
 */
public final class InMemoryFootprint {

    private InMemoryFootprint() {
    }

    /**
     * Fills a store per holder mode and prints bytes per resource.
     *
     * @param args optionally the number of resources, a positive integer (default 1000000)
     */
    public static void main(String[] args) throws Throwable {
        int resources = 1_000_000;
        if (args.length > 0) {
            try {
                resources = Integer.parseInt(args[0]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("InMemoryFootprint: the first argument must be the number of "
                        + "resources, a positive integer; was '" + args[0] + "'", e);
            }
            if (resources <= 0) {
                throw new IllegalArgumentException("InMemoryFootprint: the number of resources must be positive, was "
                        + resources);
            }
        }
        System.out.printf("InMemoryFenceStore footprint, %,d resources 'accounts:<n>', JVM %s, max heap %,d MB%n",
                resources, System.getProperty("java.vm.version"), Runtime.getRuntime().maxMemory() >> 20);
        measure(resources, false);
        measure(resources, true);
    }

    private static void measure(int resources, boolean distinctHolders) throws Throwable {
        String mode = distinctHolders ? "a holder text per resource" : "one holder text for all";
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long before = usedAfterGc(memory);
        InMemoryFenceStore store = new InMemoryFenceStore();
        String sharedHolder = "lease-7f3a9c21";
        for (int n = 0; n < resources; n++) {
            String resource = "accounts:" + n;
            String holder = distinctHolders ? "lease-" + n : sharedHolder;
            store.fence(resource, new FencingToken(resource, 1, holder), () -> null);
        }
        if (store.size() != resources) {
            throw new IllegalStateException("store holds " + store.size() + " resources, expected " + resources);
        }
        long after = usedAfterGc(memory);
        System.out.printf("%n== %s ==%n", mode);
        System.out.printf("MemoryMXBean, heap used after GC: %,d bytes more = %.1f bytes per resource%n",
                after - before, (after - before) / (double) resources);

        GraphLayout layout = GraphLayout.parseInstance(store);
        long total = layout.totalSize();
        System.out.printf("JOL, store graph: %,d objects, %,d bytes = %.1f bytes per resource%n",
                layout.totalCount(), total, total / (double) resources);
        Multiset<Class<?>> sizes = layout.getClassSizes();
        Multiset<Class<?>> counts = layout.getClassCounts();
        List<Class<?>> classes = new ArrayList<>(layout.getClasses());
        classes.sort(Comparator.comparingLong((Class<?> type) -> sizes.count(type)).reversed());
        System.out.printf("  %-60s %12s %14s %12s%n", "class", "count", "bytes", "B/resource");
        for (Class<?> type : classes) {
            System.out.printf("  %-60s %,12d %,14d %12.1f%n", type.getName(), counts.count(type), sizes.count(type),
                    sizes.count(type) / (double) resources);
        }
        // keep the store reachable until both measurements are done
        if (store.size() != resources) {
            throw new IllegalStateException("store lost resources");
        }
    }

    private static long usedAfterGc(MemoryMXBean memory) throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
