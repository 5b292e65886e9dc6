package dev.fencing.mode;

import dev.fencing.token.FencingToken;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The record of calls checked in {@link FenceMode#OBSERVE}: per fenced method, how many checks ended with each
 * outcome ({@code accepted}, {@code missing}, {@code stale}, ...) and when the last one ran, so a team rolling fencing
 * out can read which methods still run without a token before switching to enforce. Bounded: at most
 * {@value #MAX_METHODS} methods are recorded (fenced methods are declared in code; past the bound the calls are only
 * counted in {@link #dropped()}). Also rate-limits the log line of each would-be refusal: at most one per method and
 * outcome per {@link #LOG_INTERVAL_MILLIS}, so a flood of stale tokens does not hide that the same method also runs
 * without one. Thread-safe.
 */
public final class ObservedCalls {

    /** How many fenced methods are recorded at most. */
    public static final int MAX_METHODS = 1024;

    /** At most one log line per method and outcome in this many milliseconds. */
    public static final long LOG_INTERVAL_MILLIS = 60_000;

    private static final System.Logger LOG = System.getLogger(ObservedCalls.class.getName());

    private final ConcurrentHashMap<String, Method> methods = new ConcurrentHashMap<>();
    private final LongAdder dropped = new LongAdder();

    /**
     * Records one observed check of {@code operation} on {@code resource} (the declared one) ending with
     * {@code outcome}; for an outcome the fence would have refused, logs (rate-limited) the method, the effective
     * resource, the token and max_seen.
     *
     * @param refused   whether enforce mode would have refused the call
     * @param effective the effective resource checked
     * @param token     the presented token, or {@code null} when none was bound
     * @param maxSeen   the store's max_seen when it rejected the token, else {@code null}
     */
    public void record(String operation, String resource, String outcome, boolean refused, String effective,
                       FencingToken token, Long maxSeen) {
        Method method = methods.get(operation);
        if (method == null) {
            if (methods.size() >= MAX_METHODS) {
                dropped.increment();
                return;
            }
            method = methods.computeIfAbsent(operation, op -> new Method(op, resource));
        }
        long now = System.currentTimeMillis();
        method.count(outcome, now);
        if (refused && method.mayLog(outcome, now)) {
            LOG.log(System.Logger.Level.WARNING, "Observe mode: {0} would have been refused ({1}) on resource ''{2}'' "
                            + "(token {3}, max_seen {4}); it ran. At most one such line per method and outcome per "
                            + "minute; see fencing.checks'{'enforced=\"false\"'}' and the actuator endpoint "
                            + "for every count",
                    operation, outcome, FencingToken.printable(effective),
                    token == null ? "none" : Long.toString(token.value()),
                    maxSeen == null ? "unknown" : maxSeen.toString());
        }
    }

    /**
     * Records a call of {@code operation} on {@code resource} (the declared one) whose token is that of a lock this
     * process took and knows it lost (its lease ran out, its session ended): enforce mode would have refused it as
     * {@code stale} before asking the store, so it is counted so and logged (rate-limited) saying why, since in
     * observe mode this is where a lease too short for its calls shows.
     */
    public void recordLockLost(String operation, String resource, String effective, FencingToken token) {
        record(operation, resource, "stale", false, effective, token, null);
        Method method = methods.get(operation);
        if (method != null && method.mayLog("stale", System.currentTimeMillis())) {
            LOG.log(System.Logger.Level.WARNING, "Observe mode: {0} would have been refused (stale) on resource "
                    + "''{1}'' (token {2}): the lock this process took for it is known lost here (its lease ran out "
                    + "or its session ended; the store was not asked); it ran. A lease shorter than the calls made "
                    + "under it is the usual cause. At most one such line per method and outcome per minute",
                    operation, FencingToken.printable(effective),
                    token == null ? "none" : Long.toString(token.value()));
        }
    }

    /**
     * Records a call of {@code operation} on {@code resource} (the declared one) whose key could not name an entity
     * ({@code invalid}: null, no stable text, a character no token carries): enforce mode would have refused it, so
     * it is logged (rate-limited) with {@code why}, the refusal's message.
     */
    public void recordInvalid(String operation, String resource, String why) {
        record(operation, resource, "invalid", false, resource, null, null);
        Method method = methods.get(operation);
        if (method != null && method.mayLog("invalid", System.currentTimeMillis())) {
            LOG.log(System.Logger.Level.WARNING, "Observe mode: {0} would have been refused (invalid key); it ran "
                    + "unfenced. At most one such line per method and outcome per minute: {1}", operation, why);
        }
    }

    /** Every recorded method, sorted by resource then method. */
    public List<ObservedCall> calls() {
        List<ObservedCall> calls = new ArrayList<>(methods.size());
        for (Method method : methods.values()) {
            calls.add(method.view());
        }
        calls.sort(Comparator.comparing(ObservedCall::resource).thenComparing(ObservedCall::operation));
        return calls;
    }

    /** The methods that ran at least once without a token, sorted: the code paths that do not carry one yet. */
    public List<ObservedCall> withoutToken() {
        return calls().stream().filter(call -> call.count("missing") > 0).toList();
    }

    /** How many observed calls were not recorded because {@value #MAX_METHODS} methods already were. */
    public long dropped() {
        return dropped.sum();
    }

    /** Forgets every record (after a switch to enforce, or to start a fresh observation). */
    public void clear() {
        methods.clear();
        dropped.reset();
    }

    /**
     * What was recorded of one fenced method.
     *
     * @param operation   the method, as in the library's messages ({@code AccountRepository.save(Account)})
     * @param resource    its declared resource
     * @param outcomes    the number of observed checks per outcome
     * @param lastSeen    when the last observed check ran
     * @param lastOutcome the outcome of that check
     */
    public record ObservedCall(String operation, String resource, Map<String, Long> outcomes, Instant lastSeen,
                               String lastOutcome) {

        /** The number of checks that ended with {@code outcome}. */
        public long count(String outcome) {
            return outcomes.getOrDefault(outcome, 0L);
        }
    }

    private static final class Method {
        final String operation;
        final String resource;
        final ConcurrentHashMap<String, LongAdder> counts = new ConcurrentHashMap<>();
        volatile long lastSeen;
        volatile String lastOutcome;
        /** Per outcome, when its last line was logged. */
        final ConcurrentHashMap<String, AtomicLong> lastLogged = new ConcurrentHashMap<>();

        Method(String operation, String resource) {
            this.operation = operation;
            this.resource = resource;
        }

        void count(String outcome, long now) {
            counts.computeIfAbsent(outcome, o -> new LongAdder()).increment();
            lastSeen = now;
            lastOutcome = outcome;
        }

        boolean mayLog(String outcome, long now) {
            AtomicLong logged = lastLogged.computeIfAbsent(outcome, o -> new AtomicLong(Long.MIN_VALUE));
            long last = logged.get();
            return (last == Long.MIN_VALUE || now - last >= LOG_INTERVAL_MILLIS) && logged.compareAndSet(last, now);
        }

        ObservedCall view() {
            Map<String, Long> outcomes = new TreeMap<>();
            counts.forEach((outcome, count) -> outcomes.put(outcome, count.sum()));
            return new ObservedCall(operation, resource, Collections.unmodifiableMap(outcomes),
                    Instant.ofEpochMilli(lastSeen), lastOutcome);
        }
    }
}
