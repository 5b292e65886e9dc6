package dev.fencing.verify.client;

/**
 * The client's side of one workload: the name of its write operation in the history ({@code f}), the base name
 * of its resources, and one operation on resource {@code row} under that resource's lock. Each workload's Spring
 * configuration ({@link #configuration}) provides exactly one driver bean.
 */
public interface WorkloadDriver {

    /** The write's name in the history: {@code add}, {@code increment}, {@code append}. */
    String f();

    /** The resources' base name ({@link dev.fencing.verify.workload.Resources#name}). */
    String base();

    /** The value the write's invocation records, for the operation numbered {@code element}; may be null. */
    Object invokeValue(long element);

    /**
     * Runs one operation on resource {@code row}: acquires its lock, reads, pauses, writes, reporting each step.
     *
     * @param row     the resource, 0 to resources - 1
     * @param element a number unique to this operation in the run ({@code process * 1_000_000 + n})
     * @param opIndex the history index of the write
     * @param steps   told of each step as it happens
     * @return the value the write's ok records, may be null
     */
    Object run(int row, long element, long opIndex, Steps steps) throws Exception;

    /** The Spring configuration of {@code workload}: lock-set, counter or append. */
    static Class<?> configuration(String workload) {
        return switch (workload) {
            case "lock-set" -> LockSetConfig.class;
            case "counter" -> CounterConfig.class;
            case "append" -> AppendConfig.class;
            default -> throw new IllegalArgumentException("unknown workload '" + workload
                    + "' (expected lock-set, counter or append)");
        };
    }
}
