package dev.fencing.issuer;

import dev.fencing.testsupport.TokenIssuerContract;
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
 * Mutation tests of {@link TokenIssuerContract}: an issuer that locks through a correct lock service (the in-memory
 * issuer) but makes its tokens up with one pitfall each must fail the contract; the same wrapper passing the
 * service's tokens through passes it. In the issuer's package for the in-memory issuer's test hooks.
 */
class IssuerContractMutantsTest {

    /** One pitfall each. */
    enum Flaw {
        NONE,
        /** The second lease of a resource carries the first one's token again. */
        SAME_TOKEN_TWICE,
        /** A counter per issuer instance (in memory): another process, or this one restarted, counts from 1. */
        COUNTS_PER_INSTANCE,
        /** The token is the wall clock in milliseconds. */
        USES_THE_CLOCK
    }

    /** The token maker a user wrote over a lock service that grants and expires leases correctly. */
    static final class Mutant implements TokenIssuer {
        private final TokenIssuer service;
        private final Flaw flaw;
        private final Map<String, AtomicLong> counters = new ConcurrentHashMap<>();
        private final Map<String, Long> firstTokens = new ConcurrentHashMap<>();

        Mutant(TokenIssuer service, Flaw flaw) {
            this.service = service;
            this.flaw = flaw;
        }

        @Override
        public Lease acquire(String resource, Duration timeout) {
            Lease lease = service.acquire(resource, timeout);
            FencingToken granted = lease.token();
            long value = switch (flaw) {
                case NONE -> granted.value();
                case SAME_TOKEN_TWICE -> {
                    Long first = firstTokens.putIfAbsent(resource, granted.value());
                    yield first != null && counters.computeIfAbsent(resource, k -> new AtomicLong())
                            .getAndIncrement() == 0 ? first : granted.value();
                }
                case COUNTS_PER_INSTANCE -> counters.computeIfAbsent(resource, k -> new AtomicLong())
                        .incrementAndGet();
                case USES_THE_CLOCK -> System.currentTimeMillis();
            };
            return Lease.presenting(lease, new FencingToken(resource, value, granted.holder()));
        }
    }

    /** The flaw the contract class below builds its issuer with (the engine runs it on this thread). */
    static volatile Flaw flaw = Flaw.NONE;

    /** The issuer contract over a {@link Mutant}, extended as docs/testing.md shows. */
    static class Issuer extends TokenIssuerContract {
        private final AtomicLong skew = new AtomicLong();
        private final InMemoryTokenIssuer service = new InMemoryTokenIssuer(Duration.ofSeconds(30), 0,
                () -> System.nanoTime() + skew.get());
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
            service.afterGrant = once(resource, action);
        }

        @Override
        protected void expire(Lease lease) {
            skew.addAndGet(Duration.ofSeconds(31).toNanos());
        }
    }

    private static List<String> run(Flaw f) {
        flaw = f;
        try {
            List<String> failed = ContractRun.failures(Issuer.class);
            System.out.println("[contract-mutants] " + f + " killed by " + failed);
            return failed;
        } finally {
            flaw = Flaw.NONE;
        }
    }

    @Test
    @Timeout(120)
    void theIssuerWithoutAPitfallPassesTheIssuerContract() {
        assertThat(run(Flaw.NONE)).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(value = Flaw.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    @Timeout(120)
    void everyPitfallFailsTheIssuerContract(Flaw f) {
        assertThat(run(f)).isNotEmpty();
    }
}
