package dev.fencing.rule;

import dev.fencing.token.FencingToken;

/**
 * A write refused because its token is smaller than max_seen ({@link Verdict#REJECT_STALE}): a newer holder has
 * written. Or, {@link #lockLost()}, because this process knows the token's lock is lost (the lock service ended its
 * lease while it was held, its lease time ran out, or its release found the lock taken over) or already given back
 * (the acquiring call returned before work it handed to another thread wrote): refused before any store
 * saw it, {@link #maxSeen()} {@link ForgedTokenException#NOT_CONSULTED}, since another holder may hold the lock under a
 * newer token, or, after a lock service lost its data, under a lower one the store cannot tell from an older one. See
 * {@link TokenRejectedException} for what it carries.
 */
public final class StaleTokenException extends TokenRejectedException {

    private static final long serialVersionUID = 1L;

    private final boolean lockLost;

    public StaleTokenException(String resource, FencingToken presented, long maxSeen) {
        this(resource, presented, maxSeen, null);
    }

    public StaleTokenException(String resource, FencingToken presented, long maxSeen, String operation) {
        super("Stale fencing token for resource '" + FencingToken.printable(resource) + "'" + where(operation)
                        + ": presented " + presented.value() + " (holder '" + FencingToken.printable(presented.holder())
                        + "') but max_seen is " + maxSeen
                        + "; a newer token was seen for it (a newer holder's write, or a floor that compaction, a "
                        + "floor raise or a reset set), this call is refused",
                resource, presented, maxSeen, Verdict.REJECT_STALE, operation);
        this.lockLost = false;
    }

    private StaleTokenException(String resource, FencingToken presented, String operation) {
        super("Stale fencing token for resource '" + FencingToken.printable(resource) + "'" + where(operation)
                        + ": presented " + presented.value() + " (holder '" + FencingToken.printable(presented.holder())
                        + "'), whose lock this process knows is lost (its lease ended while held, or its release "
                        + "found the lock taken over) or given back already (its acquiring call returned while work it "
                        + "handed to another thread, such as an @Async method, had not written yet: wait for that work "
                        + "inside the acquiring call): another holder may hold it now, under a newer token or, after a "
                        + "lock service lost its data, a lower one. Refused before the fence store saw it, max_seen is "
                        + "untouched; acquire the lock again",
                resource, presented, ForgedTokenException.NOT_CONSULTED, Verdict.REJECT_STALE, operation);
        this.lockLost = true;
    }

    /**
     * The refusal of a token whose lock this process knows is lost, before any store saw it.
     *
     * @param operation the fenced operation, or {@code null} when unknown
     */
    public static StaleTokenException lockLost(String resource, FencingToken presented, String operation) {
        return new StaleTokenException(resource, presented, operation);
    }

    /** Whether the token was refused because its lock is known lost here, not by a store's max_seen. */
    public boolean lockLost() {
        return lockLost;
    }

    @Override
    public StaleTokenException at(String operation) {
        if (!lockLost) {
            return (StaleTokenException) super.at(operation);
        }
        StaleTokenException named = lockLost(resource(), presented(), operation);
        named.setStackTrace(getStackTrace());
        return named;
    }
}
