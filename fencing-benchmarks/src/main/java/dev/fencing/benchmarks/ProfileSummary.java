package dev.fencing.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where a benchmark's time goes, from async-profiler's collapsed stacks ({@code -prof async:...;output=collapsed}):
 * each sample is given to the part of the fenced call its innermost recognised frame belongs to (the resource's
 * lock, the counter, the token lookup, ...), so a JDK frame such as {@code ConcurrentHashMap.get} counts for the
 * library frame that called it. Only samples under the benchmark method's JMH stub are counted.
 *
 * <p>Usage: {@code ProfileSummary collapsed.csv [collapsed.csv ...]}; prints one table per file.
 */
public final class ProfileSummary {

    /** The parts, in the order they are tried on each frame; the first whose marker a frame contains wins. */
    private static final Map<String, List<String>> PARTS = parts();

    private ProfileSummary() {
    }

    private static Map<String, List<String>> parts() {
        Map<String, List<String>> parts = new LinkedHashMap<>();
        parts.put("resource lock (acquire, release)", List.of("locks/AbstractQueuedSynchronizer",
                "locks/ReentrantLock", "InMemoryFenceStore$Slot.lock", "InMemoryFenceStore$Slot.exit",
                "InMemoryFenceStore$Slot.tryRelease", "InMemoryFenceStore$Slot.tryAcquire"));
        parts.put("counter increment", List.of("atomic/DoubleAdder", "atomic/Striped64", "atomic/LongAdder",
                "instrument/Counter.increment", "CumulativeCounter", "FencingMetrics.increment"));
        parts.put("token lookup (thread-local, scope)", List.of("dev/fencing/context/", "java/lang/ThreadLocal"));
        parts.put("fence point or route lookup", List.of("FencePointSource", "FencingAspect.route",
                "FencingSupport.resolved", "support/FenceTable"));
        parts.put("resource slot lookup", List.of("InMemoryFenceStore.lockedSlot", "InMemoryFenceStore$SlotLane"));
        parts.put("rule (judge)", List.of("dev/fencing/rule/"));
        parts.put("fencing, rest (guard, bracket, store, checks)", List.of("dev/fencing/guard/", "dev/fencing/store/",
                "dev/fencing/spring/", "dev/fencing/aspectj/", "dev/fencing/mode/", "dev/fencing/metrics/",
                "dev/fencing/token/"));
        parts.put("Spring AOP (proxy, invocation)", List.of("org/springframework/aop/", "$$SpringCGLIB$$",
                "org/springframework/cglib/"));
        parts.put("reflective call of the target", List.of("jdk/internal/reflect/", "java/lang/reflect/"));
        return parts;
    }

    public static void main(String[] args) throws IOException {
        for (String file : args) {
            summarize(Path.of(file));
        }
    }

    private static void summarize(Path file) throws IOException {
        Map<String, Long> samples = new LinkedHashMap<>();
        PARTS.keySet().forEach(part -> samples.put(part, 0L));
        samples.put("the benchmark, the target, JMH", 0L);
        long total = 0;
        for (String line : Files.readAllLines(file)) {
            int space = line.lastIndexOf(' ');
            if (space < 0) {
                continue;
            }
            String[] frames = line.substring(0, space).split(";");
            long count = Long.parseLong(line.substring(space + 1).trim());
            int stub = -1;
            for (int i = 0; i < frames.length && stub < 0; i++) {
                if (frames[i].contains("_jmhStub")) {
                    stub = i;
                }
            }
            if (stub < 0) {
                continue; // JMH's own threads, the JIT, GC
            }
            total += count;
            samples.merge(partOf(frames, stub), count, Long::sum);
        }
        System.out.println("== " + file + " (" + total + " samples under the benchmark method)");
        for (Map.Entry<String, Long> part : samples.entrySet()) {
            System.out.printf(Locale.ROOT, "%5.1f%%  %s%n", total == 0 ? 0 : 100.0 * part.getValue() / total,
                    part.getKey());
        }
    }

    private static String partOf(String[] frames, int stub) {
        for (int i = frames.length - 1; i > stub; i--) {
            for (Map.Entry<String, List<String>> part : PARTS.entrySet()) {
                for (String marker : part.getValue()) {
                    if (frames[i].contains(marker)) {
                        return part.getKey();
                    }
                }
            }
        }
        return "the benchmark, the target, JMH";
    }
}
