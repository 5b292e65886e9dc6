package dev.fencing.rule;

import dev.fencing.FencingException;
import dev.fencing.token.FencingToken;

/**
 * A write refused because its token lost against max_seen, whatever the reason: {@link StaleTokenException} (smaller,
 * {@link Verdict#REJECT_STALE}), {@link DuplicateTokenException} (equal, from another holder,
 * {@link Verdict#REJECT_DUPLICATE}), {@link OutOfRangeTokenException} (further above than the store's bound,
 * {@link Verdict#REJECT_OUT_OF_RANGE}) or {@link ForgedTokenException} (failed signature verification,
 * {@link Verdict#REJECT_FORGED}, never compared with max_seen). Carries the resource, the presented token, max_seen,
 * the verdict and, once known,
 * the fenced operation. The guarded method did not run and nothing changed, unless the verdict came at the
 * transaction's commit ({@link #afterBody()}: a store checking at commit), after the method had run: its database
 * writes then rolled back, and what it did outside the database happened. Catch this type to handle every rejection;
 * {@link #of} builds the subclass a verdict calls for.
 */
public abstract sealed class TokenRejectedException extends FencingException
        permits StaleTokenException, DuplicateTokenException, OutOfRangeTokenException, ForgedTokenException {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final FencingToken presented;
    private final long maxSeen;
    private final Verdict verdict;
    private final String operation;
    /** Set on a copy only ({@link #afterBody(boolean)}), before anyone else sees it. */
    private boolean afterBody;

    TokenRejectedException(String message, String resource, FencingToken presented, long maxSeen, Verdict verdict,
                           String operation) {
        super(message);
        this.resource = resource;
        this.presented = presented;
        this.maxSeen = maxSeen;
        this.verdict = verdict;
        this.operation = operation;
    }

    /**
     * The rejection for {@code verdict}: a {@link StaleTokenException}, a {@link DuplicateTokenException} or an
     * {@link OutOfRangeTokenException}.
     *
     * @throws IllegalArgumentException when {@code verdict} accepts
     */
    public static TokenRejectedException of(String resource, FencingToken presented, long maxSeen, Verdict verdict) {
        return of(resource, presented, maxSeen, verdict, null);
    }

    /** {@link #of(String, FencingToken, long, Verdict)} naming the fenced operation. */
    public static TokenRejectedException of(String resource, FencingToken presented, long maxSeen, Verdict verdict,
                                            String operation) {
        return switch (verdict) {
            case REJECT_STALE -> new StaleTokenException(resource, presented, maxSeen, operation);
            case REJECT_DUPLICATE -> new DuplicateTokenException(resource, presented, maxSeen, operation);
            case REJECT_OUT_OF_RANGE -> new OutOfRangeTokenException(resource, presented, maxSeen, operation);
            case REJECT_FORGED -> throw new IllegalArgumentException("A forged token is never compared with max_seen: "
                    + "build a ForgedTokenException with the reason instead");
            default -> throw new IllegalArgumentException("Verdict " + verdict + " is not a rejection");
        };
    }

    /** The same rejection, naming the fenced operation (for example {@code AccountRepository.save(Account)}). */
    public TokenRejectedException at(String operation) {
        TokenRejectedException named = of(resource, presented, maxSeen, verdict, operation);
        named.afterBody = afterBody;
        named.setStackTrace(getStackTrace());
        return named;
    }

    /**
     * The same rejection, reached after the fenced method's body ran when {@code afterBody} (a check sent with the
     * transaction's COMMIT), or before it: what a store checking at commit raises.
     */
    public TokenRejectedException afterBody(boolean afterBody) {
        if (afterBody == this.afterBody) {
            return this;
        }
        TokenRejectedException copy = at(operation);
        copy.afterBody = afterBody;
        return copy;
    }

    /**
     * Whether the fenced method's body had run before the verdict: the check came at the transaction's commit. Its
     * database writes rolled back with the transaction; what it did outside the database (a message, an HTTP call, a
     * write in a {@code REQUIRES_NEW} transaction) happened. {@code false}: the body did not run.
     */
    public boolean afterBody() {
        return afterBody;
    }

    /** The message, and when {@link #afterBody()} what that means for the method's effects. */
    @Override
    public String getMessage() {
        return afterBody ? super.getMessage() + " (checked at the transaction's commit, after the method ran: its "
                + "writes in that transaction rolled back; what it did outside it happened, writes on other "
                + "connections included)" : super.getMessage();
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

    /** Why the token was rejected: a verdict that does not accept. */
    public Verdict verdict() {
        return verdict;
    }

    /** The fenced operation, or {@code null} when the store was called directly. */
    public String operation() {
        return operation;
    }

    static String where(String operation) {
        return operation == null ? "" : " in " + operation;
    }
}
