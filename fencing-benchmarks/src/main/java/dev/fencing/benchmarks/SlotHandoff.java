package dev.fencing.benchmarks;

import dev.fencing.store.BracketFenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;

/**
 * How long a check waits for one resource's slot that other threads hold: N threads enter the in-memory store's lane
 * of one resource with one token, hold it for a while (busy, or parked as a write waiting on I/O does), leave it, and
 * wait a while outside; each thread records the time from asking to holding. Prints the number of checks and the
 * wait's quantiles in nanoseconds. For the tails of the slot's lock under contention (a waiter that parks, a wake-up
 * missed), which JMH's throughput does not show.
 *
 * <p>Not a JMH benchmark: {@code java -cp fencing-benchmarks/target/benchmarks.jar dev.fencing.benchmarks.SlotHandoff
 * threads heldNanos outsideNanos seconds}, a negative {@code heldNanos} parking that long instead of spinning.
 */
public final class SlotHandoff {

    private static final int MAX_SAMPLES = 4_000_000;

    private SlotHandoff() {
    }

    /** Runs the threads and prints the waits' quantiles. */
    public static void main(String[] args) throws InterruptedException {
        if (args.length != 4) {
            throw new IllegalArgumentException("Usage: SlotHandoff threads heldNanos outsideNanos seconds");
        }
        int threads = Integer.parseInt(args[0]);
        long held = Long.parseLong(args[1]);
        long outside = Long.parseLong(args[2]);
        long until = System.nanoTime() + (long) (Double.parseDouble(args[3]) * 1e9);
        BracketFenceStore.Lane lane = new InMemoryFenceStore().lane("handoff");
        FencingToken token = new FencingToken("handoff", 1, "holder");
        long[][] waits = new long[threads][];
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread thread = new Thread(() -> waits[id] = run(lane, token, held, outside, until), "handoff-" + t);
            thread.start();
            running.add(thread);
        }
        for (Thread thread : running) {
            thread.join();
        }
        long[] all = Arrays.stream(waits).flatMapToLong(Arrays::stream).sorted().toArray();
        int n = all.length;
        System.out.printf(Locale.ROOT, "threads %d held %d outside %d: checks %d, wait ns p50 %d p99 %d p99.9 %d "
                        + "p99.99 %d max %d%n", threads, held, outside, n, all[n / 2], all[(int) (n * 0.99)],
                all[(int) (n * 0.999)], all[(int) (n * 0.9999)], all[n - 1]);
    }

    private static long[] run(BracketFenceStore.Lane lane, FencingToken token, long held, long outside, long until) {
        long[] waits = new long[MAX_SAMPLES];
        int n = 0;
        while (n < waits.length && System.nanoTime() < until) {
            long asked = System.nanoTime();
            BracketFenceStore.Entry entry = lane.enter(token);
            waits[n++] = System.nanoTime() - asked;
            if (held < 0) {
                LockSupport.parkNanos(-held);
            } else {
                spin(held);
            }
            entry.exit();
            spin(outside);
        }
        return Arrays.copyOf(waits, n);
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }
}
