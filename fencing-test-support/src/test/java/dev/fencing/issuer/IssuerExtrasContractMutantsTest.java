package dev.fencing.issuer;

import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.testsupport.IssuedTokensContract;
import dev.fencing.testsupport.IssuerFloorsContract;
import dev.fencing.testsupport.RemoteTokenIssuerContract;
import dev.fencing.testsupport.mutants.ContractRun;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mutation tests of {@link IssuedTokensContract}, {@link IssuerFloorsContract} and
 * {@link RemoteTokenIssuerContract}: an issuer written against the SPI over a correct lock service (the in-memory
 * issuer, standing for the service and its data), with one pitfall each, must fail the contract it claims; the same
 * issuer without the pitfall passes all three. Every instance of it over one service shares the service's data, as
 * two processes (or one before and after a restart) share a lock service; what a flaw keeps in the instance, a second
 * instance does not see.
 */
class IssuerExtrasContractMutantsTest {

    /** One pitfall each; the name's prefix is the contract meant to catch it. */
    enum Flaw {
        NONE,
        /** highestIssued answers one below the last token (a bound "below the next" read as "the last, exclusive"). */
        ISSUED_BOUND_ONE_LOW,
        /** highestIssued answers what this instance handed out: another process, or a restart, answers 0. */
        ISSUED_BOUND_FROM_INSTANCE,
        /** isHeld answers from this instance's own leases: one held by another process reads as free. */
        ISSUED_HELD_FROM_INSTANCE,
        /** isHeld answers whether this instance holds any lease, whatever the resource. */
        ISSUED_HELD_FOR_ANY_RESOURCE,
        /** An issuer of one sequence takes requireAbove's bound and does nothing with it. */
        ISSUED_REQUIRE_ABOVE_IGNORED,
        /** A family floor is honoured at the floor, not above it: the next token equals the floor. */
        FLOORS_AT_NOT_ABOVE,
        /** A family floor reaches only resources the issuer never locked; a counter it has stays below. */
        FLOORS_NEW_RESOURCES_ONLY,
        /** The family floors are kept in the instance: another process, or a restart, issues below them. */
        FLOORS_IN_INSTANCE,
        /** A family floor is set, not raised: a later, lower raise lowers it. */
        FLOORS_LOWERED,
        /** raiseResourceFloor does nothing although the issuer keeps a counter per resource. */
        FLOORS_RESOURCE_FLOOR_IGNORED,
        /** raiseFamilyFloor takes a blank family and a negative floor. */
        FLOORS_ARGUMENTS_UNCHECKED,
        /** probe() answers without asking the service. */
        REMOTE_PROBE_ASKS_NOTHING,
        /** An unreachable service's error does not say which service. */
        REMOTE_UNREACHABLE_UNNAMED,
        /** An unreachable service is retried well past the caller's timeout. */
        REMOTE_RETRIES_PAST_THE_TIMEOUT,
        /** An unreachable service ends in the client's own exception, not a LockAcquisitionException. */
        REMOTE_RAW_CLIENT_EXCEPTION,
        /** A lease known lost is handed out again (its session re-granted the old key): the old token, twice. */
        REMOTE_REGRANTS_A_LOST_LEASE
    }

    /** What every instance shares: the lock service and the floors kept with it. */
    static final class Service {
        final AtomicLong skew = new AtomicLong();
        final InMemoryTokenIssuer locks = new InMemoryTokenIssuer(Duration.ofSeconds(30), 0,
                () -> System.nanoTime() + skew.get());
        final Map<String, Long> familyFloors = new ConcurrentHashMap<>();
        final AtomicLong sequence = new AtomicLong();
    }

    /** The issuer a user wrote over {@link Service}: a counter per resource, floors applied when a resource locks. */
    static final class Mutant implements TokenIssuer, IssuedTokens, IssuerFloors {
        private final Service service;
        private final Flaw flaw;
        private final Map<String, Long> familyFloors;
        private final Map<String, Long> issuedHere = new ConcurrentHashMap<>();
        private final Map<String, Lease> open = new ConcurrentHashMap<>();
        private final Map<String, Lease> last = new ConcurrentHashMap<>();

        Mutant(Service service, Flaw flaw) {
            this.service = service;
            this.flaw = flaw;
            this.familyFloors = flaw == Flaw.FLOORS_IN_INSTANCE ? new ConcurrentHashMap<>() : service.familyFloors;
        }

        @Override
        public Lease acquire(String resource, Duration timeout) {
            TokenIssuer.checkAcquire(resource, timeout);
            Lease before = last.get(resource);
            if (flaw == Flaw.REMOTE_REGRANTS_A_LOST_LEASE && before != null && before.isLost()) {
                Lease again = service.locks.acquire(resource, timeout);
                return track(resource, Lease.presenting(again, before.token()));
            }
            String family = ResourceFamily.has(resource) ? ResourceFamily.of(resource) : null;
            Long floor = family == null ? null : familyFloors.get(family);
            boolean fresh = service.locks.highestIssued(resource) == 0;
            if (floor != null && (flaw != Flaw.FLOORS_NEW_RESOURCES_ONLY || fresh)) {
                long at = flaw == Flaw.FLOORS_AT_NOT_ABOVE ? Math.max(0, floor - 1) : floor;
                service.locks.raiseResourceFloor(resource, at);
            }
            return track(resource, service.locks.acquire(resource, timeout));
        }

        private Lease track(String resource, Lease lease) {
            FencingToken token = lease.token();
            issuedHere.merge(resource, token.value(), Math::max);
            last.put(resource, lease);
            open.put(resource, lease);
            return new Lease() {
                @Override
                public FencingToken token() {
                    return token;
                }

                @Override
                public boolean isLost() {
                    return lease.isLost();
                }

                @Override
                public boolean isReleased() {
                    return lease.isReleased();
                }

                @Override
                public void close() {
                    open.remove(resource, lease);
                    lease.close();
                }
            };
        }

        @Override
        public long highestIssued(String resource) {
            return switch (flaw) {
                case ISSUED_BOUND_ONE_LOW -> Math.max(0, service.locks.highestIssued(resource) - 1);
                case ISSUED_BOUND_FROM_INSTANCE -> issuedHere.getOrDefault(resource, 0L);
                default -> service.locks.highestIssued(resource);
            };
        }

        @Override
        public boolean isHeld(String resource) {
            return switch (flaw) {
                case ISSUED_HELD_FROM_INSTANCE -> open.containsKey(resource);
                case ISSUED_HELD_FOR_ANY_RESOURCE -> !open.isEmpty();
                default -> service.locks.isHeld(resource);
            };
        }

        @Override
        public void raiseFamilyFloor(String family, long floor) {
            if (flaw != Flaw.FLOORS_ARGUMENTS_UNCHECKED) {
                IssuerFloors.checkArguments("Mutant.raiseFamilyFloor", family, floor);
            }
            if (flaw == Flaw.FLOORS_LOWERED) {
                familyFloors.put(family, floor);
            } else {
                familyFloors.merge(family, floor, Math::max);
            }
        }

        @Override
        public void raiseResourceFloor(String resource, long floor) {
            if (flaw != Flaw.FLOORS_RESOURCE_FLOOR_IGNORED) {
                service.locks.raiseResourceFloor(resource, floor);
            }
        }
    }

    /**
     * An issuer of one sequence for every resource (as ZooKeeper's zxid) over {@link Service}: the token is the
     * service-wide sequence, and {@link #requireAbove} refuses a token at or below its bound.
     */
    static final class OneSequence implements TokenIssuer, IssuedTokens {
        private final Service service;
        private final Flaw flaw;
        private volatile long bound = Long.MIN_VALUE;
        private volatile String boundSource;

        OneSequence(Service service, Flaw flaw) {
            this.service = service;
            this.flaw = flaw;
        }

        @Override
        public Lease acquire(String resource, Duration timeout) {
            Lease lease = service.locks.acquire(resource, timeout);
            long value = service.sequence.incrementAndGet();
            if (value <= bound) {
                lease.close();
                throw new LockAcquisitionException(resource, "Token " + value + " of resource '" + resource
                        + "' is not above " + bound + ", " + boundSource + ": the sequence went back");
            }
            return Lease.presenting(lease, new FencingToken(resource, value, lease.token().holder()));
        }

        @Override
        public long highestIssued(String resource) {
            return service.sequence.get();
        }

        @Override
        public boolean isHeld(String resource) {
            return service.locks.isHeld(resource);
        }

        @Override
        public boolean oneSequence() {
            return true;
        }

        @Override
        public synchronized void requireAbove(long token, String source) {
            if (flaw != Flaw.ISSUED_REQUIRE_ABOVE_IGNORED && token > bound) {
                bound = token;
                boundSource = source;
            }
        }
    }

    /** An issuer of the same kind pointed at an address where nothing listens. */
    static final class Unreachable implements TokenIssuer {
        static final String ADDRESS = "lock-service.invalid:2181";
        private final Flaw flaw;

        Unreachable(Flaw flaw) {
            this.flaw = flaw;
        }

        @Override
        public Lease acquire(String resource, Duration timeout) {
            TokenIssuer.checkAcquire(resource, timeout);
            switch (flaw) {
                case REMOTE_UNREACHABLE_UNNAMED:
                    throw new LockAcquisitionException(resource, "Could not lock resource '" + resource
                            + "': connection refused");
                case REMOTE_RETRIES_PAST_THE_TIMEOUT:
                    try {
                        Thread.sleep(timeout.plusSeconds(5).toMillis());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    break;
                case REMOTE_RAW_CLIENT_EXCEPTION:
                    throw new java.io.UncheckedIOException(new java.net.ConnectException("Connection refused: "
                            + ADDRESS));
                default:
                    break;
            }
            throw new LockAcquisitionException(resource, "Could not reach the lock service at " + ADDRESS
                    + " to lock resource '" + resource + "'");
        }

        @Override
        public void probe() {
            if (flaw != Flaw.REMOTE_PROBE_ASKS_NOTHING) {
                throw new IllegalStateException("Lock service at " + ADDRESS + " cannot be reached");
            }
        }
    }

    /** The flaw the contract classes below build their issuers with (the engine runs them on this thread). */
    static volatile Flaw flaw = Flaw.NONE;

    /** The recovery contract over a {@link Mutant}. */
    static class Issued extends IssuedTokensContract {
        private final Service service = new Service();
        private final Mutant issuer = new Mutant(service, flaw);
        private final Mutant other = new Mutant(service, flaw);

        @Override
        protected TokenIssuer issuer() {
            return issuer;
        }

        @Override
        protected TokenIssuer otherIssuer() {
            return other;
        }
    }

    /** The recovery contract over a {@link OneSequence}, with a fresh instance for the bound. */
    static class IssuedOneSequence extends IssuedTokensContract {
        private final Service service = new Service();
        private final OneSequence issuer = new OneSequence(service, flaw);

        @Override
        protected TokenIssuer issuer() {
            return issuer;
        }

        @Override
        protected TokenIssuer otherIssuer() {
            return new OneSequence(service, flaw);
        }

        @Override
        protected TokenIssuer freshIssuer() {
            return new OneSequence(service, flaw);
        }
    }

    /** The floors contract over a {@link Mutant}. */
    static class Floors extends IssuerFloorsContract {
        private final Service service = new Service();
        private final Mutant issuer = new Mutant(service, flaw);
        private final Mutant other = new Mutant(service, flaw);

        @Override
        protected TokenIssuer issuer() {
            return issuer;
        }

        @Override
        protected TokenIssuer otherIssuer() {
            return other;
        }

        @Override
        protected boolean perResourceCounters() {
            return true;
        }
    }

    /** The remote issuer contract over a {@link Mutant} and its {@link Unreachable} twin. */
    static class Remote extends RemoteTokenIssuerContract {
        private final Service service = new Service();
        private final Mutant issuer = new Mutant(service, flaw);
        private final Mutant other = new Mutant(service, flaw);

        @Override
        protected TokenIssuer issuer() {
            return issuer;
        }

        @Override
        protected TokenIssuer otherIssuer() {
            return other;
        }

        @Override
        protected void afterNextGrant(String resource, Runnable action) {
            service.locks.afterGrant = once(resource, action);
        }

        @Override
        protected void expire(Lease lease) {
            service.skew.addAndGet(Duration.ofSeconds(31).toNanos());
        }

        @Override
        protected TokenIssuer unreachableIssuer() {
            return new Unreachable(flaw);
        }

        @Override
        protected String unreachableServiceName() {
            return Unreachable.ADDRESS;
        }
    }

    private static List<String> run(Flaw f) {
        flaw = f;
        try {
            List<String> failed = new java.util.ArrayList<>();
            for (Class<?> contract : List.of(Issued.class, IssuedOneSequence.class, Floors.class, Remote.class)) {
                ContractRun.failures(contract).forEach(t -> failed.add(contract.getSimpleName() + "." + t));
            }
            System.out.println("[contract-mutants] " + f + " killed by " + failed);
            return failed;
        } finally {
            flaw = Flaw.NONE;
        }
    }

    @Test
    @Timeout(300)
    void theIssuerWithoutAPitfallPassesAllThreeContracts() {
        assertThat(run(Flaw.NONE)).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(value = Flaw.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    @Timeout(300)
    void everyPitfallFailsTheContractMeantToCatchIt(Flaw f) {
        String contract = switch (f.name().substring(0, f.name().indexOf('_'))) {
            case "ISSUED" -> "Issued"; // Issued or IssuedOneSequence
            case "FLOORS" -> "Floors.";
            default -> "Remote.";
        };
        assertThat(run(f)).anySatisfy(t -> assertThat(t).startsWith(contract));
    }
}
