package dev.fencing.issuer;

import dev.fencing.FencingConfigurationException;
import dev.fencing.recovery.FenceInventory;
import dev.fencing.recovery.IssuedResources;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.CounterFloors;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.token.FencingToken;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * The issuer of a migration from lock service A to lock service B: it acquires from B (the decorated issuer) and
 * issues B's token value plus a fixed base, chosen once above every token A issued, so that every token of B is
 * larger than every token of A and no write becomes stale at the cut-over. Locking, release, loss and the counters
 * stay the decorated issuer's; a sum that overflows a {@code long} fails the acquire and leaves no lock held.
 *
 * <p>Build it with {@link #of} (a known base) or {@link #establish} (the base stored durably in an
 * {@link IssuerBase} first: a configured base that differs from the stored one refuses to start). What the decorated
 * issuer offers beside locking stays offered, shifted by the base: {@link IssuedTokens} when it is one (an instance
 * of this class is then {@code IssuedTokens} too), {@link IssuerFloors} or {@link CounterFloors} likewise, and
 * {@link IssuedResources} as it is; the recovery after a restore or a counter reset relies on them.
 */
public class OffsetTokenIssuer implements TokenIssuer {

    private static final System.Logger LOG = System.getLogger(OffsetTokenIssuer.class.getName());

    private final TokenIssuer delegate;
    private final long base;

    private OffsetTokenIssuer(TokenIssuer delegate, long base) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.base = checkBase(base);
        if (delegate instanceof OffsetTokenIssuer) {
            throw new IllegalArgumentException("OffsetTokenIssuer: " + delegate + " is already offset; add the two "
                    + "bases into one instead of nesting offsets");
        }
        if (delegate instanceof dev.fencing.signing.SigningTokenIssuer) {
            throw new IllegalArgumentException("OffsetTokenIssuer: " + delegate + " signs its tokens, and a shifted "
                    + "token would carry a signature of another value; offset first, then sign: "
                    + "new SigningTokenIssuer(OffsetTokenIssuer.of(issuer, base), signer)");
        }
    }

    /**
     * An offset issuer over {@code delegate} with {@code base}: {@code IssuedTokens}, {@code IssuerFloors} (or
     * {@code CounterFloors}) and {@code IssuedResources} when {@code delegate} is.
     *
     * @throws IllegalArgumentException when {@code base} is not positive, {@code delegate} is already offset, or
     *                                  it offers a combination of these that no offset issuer offers (never
     *                                  silently dropped: a floor raise would then skip the issuer's side)
     */
    public static OffsetTokenIssuer of(TokenIssuer delegate, long base) {
        boolean issued = delegate instanceof IssuedTokens;
        boolean floors = delegate instanceof IssuerFloors;
        boolean counters = delegate instanceof CounterFloors;
        boolean listed = delegate instanceof IssuedResources;
        OffsetTokenIssuer offset;
        if (issued && floors) {
            offset = listed ? new TrackedListedWithFloors(delegate, base) : new TrackedWithFloors(delegate, base);
        } else if (issued && counters) {
            offset = new TrackedWithCounters(delegate, base);
        } else if (issued) {
            offset = new Tracked(delegate, base);
        } else if (floors) {
            offset = new WithFloors(delegate, base);
        } else if (counters) {
            offset = new WithCounters(delegate, base);
        } else {
            offset = new OffsetTokenIssuer(delegate, base);
        }
        for (Class<?> side : List.of(IssuedTokens.class, CounterFloors.class, IssuerFloors.class,
                IssuedResources.class)) {
            if (side.isInstance(delegate) && !side.isInstance(offset)) {
                throw new IllegalArgumentException("OffsetTokenIssuer cannot offer the " + side.getSimpleName()
                        + " of " + delegate + " together with its other sides; the recovery after a restore or a "
                        + "counter reset needs it");
            }
        }
        return offset;
    }

    /**
     * An offset issuer whose base is stored durably under {@code name}: the first start stores {@code base} (after
     * checking, when {@code fences} is given, that it is above the highest max_seen of the fence store); every later
     * start must be configured with the same base.
     *
     * @param fences the fence store's inventory, or {@code null} to skip the check of a first start
     * @throws FencingConfigurationException when the stored base differs from {@code base}, or a first base is not
     *                                       above the fence store's highest max_seen; nothing was stored
     * @throws IllegalArgumentException      when {@code base} is not positive or {@code name} is blank
     */
    public static OffsetTokenIssuer establish(TokenIssuer delegate, IssuerBase store, String name, long base,
                                              FenceInventory fences) {
        Objects.requireNonNull(store, "store");
        checkBase(base);
        IssuerBase.checkName(name);
        OptionalLong stored = store.stored(name);
        if (stored.isEmpty()) {
            if (fences != null) {
                OptionalLong highest = fences.highestMaxSeen();
                if (highest.isPresent() && highest.getAsLong() >= base) {
                    throw new FencingConfigurationException("Issuer offset '" + name + "': base " + base + " is not "
                            + "above the fence store's highest max_seen " + highest.getAsLong() + "; tokens of the "
                            + "new issuer would be refused as stale. Choose a base above it, with headroom for the "
                            + "tokens the old issuer issues while the deploy rolls (see docs/issuers.md)");
                }
            }
            long established = store.establish(name, base);
            requireSame(name, base, established);
            String others = otherMigrations(store, name);
            if (others == null) {
                LOG.log(System.Logger.Level.INFO, () -> "Issuer offset '" + name + "' stored with base " + base);
            } else {
                LOG.log(System.Logger.Level.WARNING, () -> "Issuer offset '" + name + "' stored with base " + base
                        + ", while offsets of other migrations are stored: " + others + ". Instances still configured "
                        + "with one of them issue other tokens, and the lower ones are refused as stale on every "
                        + "resource a higher one wrote: configure every instance with the same migration name and "
                        + "base (docs/issuers.md, \"Moving to another issuer\")");
            }
        } else {
            requireSame(name, base, stored.getAsLong());
        }
        return of(delegate, base);
    }

    /** The stored bases of migrations other than {@code name}, as text, or {@code null} when there are none. */
    private static String otherMigrations(IssuerBase store, String name) {
        StringBuilder others = new StringBuilder();
        try {
            store.storedBases().forEach((migration, stored) -> {
                if (!migration.equals(name)) {
                    others.append(others.isEmpty() ? "" : ", ").append('\'').append(migration).append("'=")
                            .append(stored);
                }
            });
        } catch (RuntimeException e) {
            return null; // a listing for a log line: its failure changes nothing stored
        }
        return others.isEmpty() ? null : others.toString();
    }

    private static void requireSame(String name, long configured, long stored) {
        if (stored != configured) {
            throw new FencingConfigurationException("Issuer offset '" + name + "': the configured base " + configured
                    + " differs from the stored base " + stored + "; a base is chosen once and never changed (a lower "
                    + "one would make every token stale, a typo must not do that). Configure " + stored
                    + ", or use a new migration name for a new migration");
        }
    }

    private static long checkBase(long base) {
        if (base <= 0) {
            throw new IllegalArgumentException("OffsetTokenIssuer base must be positive, was " + base);
        }
        return base;
    }

    /**
     * Acquires from the decorated issuer and returns its lease with the token value plus the base.
     *
     * @throws LockAcquisitionException when the sum overflows a {@code long} (the lock is released first), or as the
     *                                  decorated issuer throws
     */
    @Override
    public Lease acquire(String resource, Duration timeout) {
        TokenIssuer.checkAcquire(resource, timeout);
        Lease lease = delegate.acquire(resource, timeout);
        FencingToken shifted;
        try {
            FencingToken token = lease.token();
            shifted = new FencingToken(token.resource(), shift(token.value()), token.holder());
        } catch (RuntimeException e) {
            try {
                lease.close();
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw new LockAcquisitionException(resource, "Could not offset the token of the lock on '" + resource
                    + "' by base " + base + "; the lock was released: " + e.getMessage(), e);
        }
        return Lease.presenting(lease, shifted);
    }

    /** {@code value + base}, failing with a message naming both when it overflows. */
    long shift(long value) {
        try {
            return Math.addExact(value, base);
        } catch (ArithmeticException e) {
            throw new ArithmeticException("token " + value + " plus base " + base + " overflows a long");
        }
    }

    @Override
    public void probe() {
        delegate.probe();
    }

    /** The issuer this one decorates. */
    public TokenIssuer delegate() {
        return delegate;
    }

    /** What is added to every token of the decorated issuer. */
    public long base() {
        return base;
    }

    @Override
    public String toString() {
        return "OffsetTokenIssuer[" + delegate + ", base " + base + "]";
    }

    /** Over an {@link IssuedTokens} issuer: its highest issued token plus the base. */
    private static class Tracked extends OffsetTokenIssuer implements IssuedTokens {
        Tracked(TokenIssuer delegate, long base) {
            super(delegate, base);
        }

        @Override
        public long highestIssued(String resource) {
            return shift(((IssuedTokens) delegate()).highestIssued(resource));
        }

        @Override
        public boolean isHeld(String resource) {
            return ((IssuedTokens) delegate()).isHeld(resource);
        }

        @Override
        public boolean oneSequence() {
            return ((IssuedTokens) delegate()).oneSequence();
        }

        /** The delegate's tokens must be above {@code token} less the base (nothing to require below the base). */
        @Override
        public void requireAbove(long token, String source) {
            if (token >= base()) {
                ((IssuedTokens) delegate()).requireAbove(token - base(), source + ", less the offset base " + base());
            }
        }
    }

    /** Over an issuer that is {@link IssuedTokens} and {@link CounterFloors}, without family floors. */
    private static final class TrackedWithCounters extends Tracked implements ShiftedCounters {
        TrackedWithCounters(TokenIssuer delegate, long base) {
            super(delegate, base);
        }
    }

    /** Over an issuer that is {@link IssuedTokens} and {@link IssuerFloors}. */
    private static class TrackedWithFloors extends Tracked implements ShiftedFloors {
        TrackedWithFloors(TokenIssuer delegate, long base) {
            super(delegate, base);
        }
    }

    /** Over an issuer that is {@link IssuedTokens}, {@link IssuerFloors} and {@link IssuedResources} (JDBC's). */
    private static final class TrackedListedWithFloors extends TrackedWithFloors implements ListedResources {
        TrackedListedWithFloors(TokenIssuer delegate, long base) {
            super(delegate, base);
        }
    }

    /** Over an {@link IssuerFloors} issuer. */
    private static final class WithFloors extends OffsetTokenIssuer implements ShiftedFloors {
        WithFloors(TokenIssuer delegate, long base) {
            super(delegate, base);
        }
    }

    /** Over a {@link CounterFloors} issuer. */
    private static final class WithCounters extends OffsetTokenIssuer implements ShiftedCounters {
        WithCounters(TokenIssuer delegate, long base) {
            super(delegate, base);
        }
    }

    /** The decorated issuer's counter floors, less the base; implemented by offset issuers only. */
    private interface ShiftedCounters extends CounterFloors {
        @Override
        default void raiseResourceFloor(String resource, long floor) {
            raiseResourceShifted((OffsetTokenIssuer) this, resource, floor);
        }
    }

    /** The decorated issuer's family and counter floors, less the base; implemented by offset issuers only. */
    private interface ShiftedFloors extends IssuerFloors, ShiftedCounters {
        @Override
        default void raiseFamilyFloor(String family, long floor) {
            raiseShifted((OffsetTokenIssuer) this, family, floor);
        }

        @Override
        default void raiseResourceFloor(String resource, long floor) {
            ShiftedCounters.super.raiseResourceFloor(resource, floor);
        }
    }

    /** The decorated issuer's resources, as they are (names are not shifted); implemented by offset issuers only. */
    private interface ListedResources extends IssuedResources {
        @Override
        default List<String> issuedResources(String after, int limit) {
            return ((IssuedResources) ((OffsetTokenIssuer) this).delegate()).issuedResources(after, limit);
        }
    }

    /** A floor for this issuer's tokens is {@code floor - base} for the decorated one's (never below 0). */
    private static void raiseShifted(OffsetTokenIssuer issuer, String family, long floor) {
        if (family == null || family.isBlank()) {
            throw new IllegalArgumentException("family must not be blank");
        }
        if (floor < 0) {
            throw new IllegalArgumentException("floor of family '" + family + "' must not be negative, was " + floor);
        }
        ((IssuerFloors) issuer.delegate()).raiseFamilyFloor(family, Math.max(0, floor - issuer.base()));
    }

    /** {@link #raiseShifted} for one resource's counter. */
    private static void raiseResourceShifted(OffsetTokenIssuer issuer, String resource, long floor) {
        if (floor < 0) {
            throw new IllegalArgumentException("floor of resource '" + resource + "' must not be negative, was "
                    + floor);
        }
        ((CounterFloors) issuer.delegate()).raiseResourceFloor(resource, Math.max(0, floor - issuer.base()));
    }
}
