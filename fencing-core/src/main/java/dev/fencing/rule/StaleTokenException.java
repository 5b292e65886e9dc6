package dev.fencing.rule;

import dev.fencing.FencingException;
import dev.fencing.token.FencingToken;

/**
 * A write refused because its token lost against max_seen: smaller ({@link Verdict#REJECT_STALE}) or equal from
 * another holder ({@link Verdict#REJECT_DUPLICATE}). Carries the resource, the presented token, max_seen and,
 * once known, the fenced operation; the guarded method did not run and nothing changed.
 */
public class StaleTokenException extends FencingException {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final FencingToken presented;
    private final long maxSeen;
    private final Verdict verdict;
    private final String operation;

    public StaleTokenException(String resource, FencingToken presented, long maxSeen, Verdict verdict) {
        this(resource, presented, maxSeen, verdict, null);
    }

    public StaleTokenException(String resource, FencingToken presented, long maxSeen, Verdict verdict, String operation) {
        super(message(resource, presented, maxSeen, verdict, operation));
        if (verdict.accepted()) {
            throw new IllegalArgumentException("Verdict " + verdict + " is not a rejection");
        }
        this.resource = resource;
        this.presented = presented;
        this.maxSeen = maxSeen;
        this.verdict = verdict;
        this.operation = operation;
    }

    /** The same rejection, naming the fenced operation (for example {@code AccountRepository.save(Account)}). */
    public StaleTokenException at(String operation) {
        StaleTokenException named = new StaleTokenException(resource, presented, maxSeen, verdict, operation);
        named.setStackTrace(getStackTrace());
        return named;
    }

    public String resource() {
        return resource;
    }

    public FencingToken presented() {
        return presented;
    }

    public long maxSeen() {
        return maxSeen;
    }

    public Verdict verdict() {
        return verdict;
    }

    /** The fenced operation, or {@code null} when the store was called directly. */
    public String operation() {
        return operation;
    }

    private static String message(String resource, FencingToken presented, long maxSeen, Verdict verdict, String op) {
        String where = op == null ? "" : " in " + op;
        if (verdict == Verdict.REJECT_DUPLICATE) {
            return "Duplicate fencing token for resource '" + resource + "'" + where + ": " + presented.value()
                    + " from holder '" + presented.holder() + "' equals max_seen " + maxSeen
                    + ", which another holder presented first; two holders must never write with one token";
        }
        return "Stale fencing token for resource '" + resource + "'" + where + ": presented " + presented.value()
                + " (holder '" + presented.holder() + "') but max_seen is " + maxSeen
                + "; a newer holder has written, this write is refused";
    }
}
