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
    /** The lost lock of the acquiring call the refused work ran inside, or {@code null}: its own lock was lost. */
    private final FencingToken enclosing;
    /** Whether a nested acquiring call was refused (before its lock service was asked), not a check. */
    private final boolean acquiring;

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
        this.enclosing = null;
        this.acquiring = false;
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
        this.enclosing = null;
        this.acquiring = false;
    }

    private StaleTokenException(String resource, FencingToken presented, FencingToken enclosing, boolean acquiring,
                                String operation) {
        super((acquiring ? "Refused " + (operation == null ? "an acquiring call" : operation) + ", which acquires "
                        + "resource '" + FencingToken.printable(resource) + "' (no lock of its own is taken, or one "
                        + "taken while the loss was not known yet is given back at once)"
                        : "Stale fencing token for resource '" + FencingToken.printable(resource) + "'"
                        + where(operation) + ": presented " + presented.value() + " (holder '"
                        + FencingToken.printable(presented.holder()) + "'), acquired")
                        + ": it runs inside an acquiring call whose lock on '"
                        + FencingToken.printable(enclosing.resource()) + "' (token " + enclosing.value()
                        + ") this process knows is lost (its lease ended while held, or its release found the lock "
                        + "taken over) or given back already (the acquiring call returned while work it handed to "
                        + "another thread had not finished). The work that lock stood for may be another holder's now, "
                        + "so nothing nested in it may go on: a fresh lock taken here would fence each write on its "
                        + "own and still let this run overwrite the new holder's. Refused before any store saw it, "
                        + "max_seen is untouched; let the outer call fail and run it again under a new lock",
                resource, presented, ForgedTokenException.NOT_CONSULTED, Verdict.REJECT_STALE, operation);
        this.lockLost = true;
        this.enclosing = enclosing;
        this.acquiring = acquiring;
    }

    /**
     * The refusal of a token whose lock this process knows is lost, before any store saw it.
     *
     * @param operation the fenced operation, or {@code null} when unknown
     */
    public static StaleTokenException lockLost(String resource, FencingToken presented, String operation) {
        return new StaleTokenException(resource, presented, operation);
    }

    /**
     * The refusal of work nested in an acquiring call whose lock, {@code enclosing}, this process knows is lost or
     * given back: a check presenting {@code presented}, a token acquired inside that call, for {@code resource}.
     * {@link #lockLost()} is {@code true}; {@link #enclosingLock()} is {@code enclosing}.
     *
     * @param operation the fenced operation, or {@code null} when unknown
     */
    public static StaleTokenException enclosingLockLost(String resource, FencingToken presented,
                                                        FencingToken enclosing, String operation) {
        return new StaleTokenException(resource, presented, java.util.Objects.requireNonNull(enclosing, "enclosing"),
                false, operation);
    }

    /**
     * The refusal of an acquiring call of {@code resource} nested in an acquiring call whose lock, {@code enclosing},
     * this process knows is lost or given back: refused before its lock service is asked (or, when the loss became
     * known during the wait, with the lock just taken given back at once). {@link #presented()} and
     * {@link #enclosingLock()} are {@code enclosing}, the token the nested call ran under; {@link #resource()} is the
     * nested call's.
     *
     * @param operation the acquiring operation, or {@code null} when unknown
     */
    public static StaleTokenException nestedAcquireRefused(String resource, FencingToken enclosing, String operation) {
        return new StaleTokenException(resource, enclosing, java.util.Objects.requireNonNull(enclosing, "enclosing"),
                true, operation);
    }

    /**
     * The lost or given-back lock of the acquiring call the refused work was nested in, or {@code null} when the
     * refusal is not of nested work (the presented token's own lock was lost, or a store refused it).
     */
    public FencingToken enclosingLock() {
        return enclosing;
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
        StaleTokenException named = enclosing != null
                ? new StaleTokenException(resource(), presented(), enclosing, acquiring, operation)
                : lockLost(resource(), presented(), operation);
        named.setStackTrace(getStackTrace());
        return named;
    }
}
