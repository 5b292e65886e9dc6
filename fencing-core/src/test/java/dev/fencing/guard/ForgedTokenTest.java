package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.SigningTokenIssuer;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenSignature;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.fencing.guard.Bound.bound;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A guard with a verifier refuses forged tokens before the store: outcome {@code forged}, max_seen untouched, the
 * listener told, a message naming resource and method and no key material.
 */
class ForgedTokenTest {

    private final byte[] secret = secret();
    private final TokenSigner signer = TokenSigner.hmac("k1", secret);
    private final TokenVerifier verifier = new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", secret)));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencePoint repo = new FencePoint("AccountRepository.deposit(long,long)", "accounts", null, null,
            false, new FencingMetrics(registry));
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final List<TokenRejectedException> heard = new ArrayList<>();
    private final FenceGuard guard = FenceGuard.builder(store).verifier(verifier).rejectionListener(heard::add).build();
    private final AtomicInteger writes = new AtomicInteger();

    /**
     * A forgery the guard refuses is logged like the other enforced refusals (a WARNING, at most one per method and
     * outcome per minute), with why, never the signature.
     */
    @Test
    void aForgeryTheGuardRefusesIsLoggedWithWhy() {
        FencingToken forged = new FencingToken("accounts:logged", Long.MAX_VALUE, "evil",
                TokenSignature.of("k0", new byte[32]));
        FencePoint point = new FencePoint("Ledger.forgedAndLogged(long)", "accounts:logged", null, null, false,
                new FencingMetrics(registry));
        try (dev.fencing.LogCapture log = dev.fencing.LogCapture.of(RefusalLog.class)) {
            for (int i = 0; i < 2; i++) {
                assertThatThrownBy(() -> bound(forged, () -> guard.invoke(point, new Object[0],
                        writes::incrementAndGet))).isInstanceOf(ForgedTokenException.class);
            }
            assertThat(log.records()).singleElement().satisfies(record -> {
                assertThat(record.getLevel()).isEqualTo(java.util.logging.Level.WARNING);
                assertThat(java.text.MessageFormat.format(record.getMessage(), record.getParameters()))
                        .contains("Refused Ledger.forgedAndLogged(long) (forged) on resource 'accounts:logged'")
                        .contains("'k0'").contains("max_seen untouched").doesNotContain("max_seen -1");
            });
        }
        assertThat(writes).hasValue(0);
    }

    @Test
    void theLongMaxValueForgeryIsRefusedCountedAndLeavesMaxSeenAlone() throws Throwable {
        FencingToken real = signer.sign(new FencingToken("accounts", 5, "client-1"));
        bound(real, () -> guard.invoke(repo, new Object[0], writes::incrementAndGet));

        List<FencingToken> forgeries = List.of(
                new FencingToken("accounts", Long.MAX_VALUE, "evil"),                          // unsigned
                new FencingToken("accounts", Long.MAX_VALUE, "client-1", real.signature()),    // moved signature
                new FencingToken("accounts", Long.MAX_VALUE, "evil", TokenSignature.of("k0", new byte[32])),
                TokenSigner.hmac("k1", secret()).sign(new FencingToken("accounts", Long.MAX_VALUE, "evil")));
        for (FencingToken forged : forgeries) {
            assertThatThrownBy(() -> bound(forged, () -> guard.invoke(repo, new Object[0], writes::incrementAndGet)))
                    .isInstanceOf(ForgedTokenException.class)
                    .hasMessageContaining("'accounts'").hasMessageContaining("AccountRepository.deposit(long,long)")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain(
                            Base64.getEncoder().encodeToString(secret).substring(0, 10),
                            Base64.getUrlEncoder().withoutPadding().encodeToString(secret).substring(0, 10),
                            HexFormat.of().formatHex(secret).substring(0, 10))
                            .doesNotContain(forged.isSigned() ? forged.signature().toText() : "!"));
        }

        assertThat(writes).hasValue(1);
        assertThat(store.maxSeen("accounts")).hasValue(5);
        assertThat(registry.get(FencingMetrics.CHECKS).tag("outcome", "forged").counter().count()).isEqualTo(4);
        assertThat(registry.get(FencingMetrics.CHECKS).tag("outcome", "accepted").counter().count()).isEqualTo(1);
        assertThat(heard).hasSize(4).allSatisfy(e -> {
            assertThat(e).isInstanceOf(ForgedTokenException.class);
            assertThat(e.verdict()).isEqualTo(Verdict.REJECT_FORGED);
            assertThat(e.operation()).isEqualTo("AccountRepository.deposit(long,long)");
            assertThat(e.maxSeen()).isEqualTo(ForgedTokenException.NOT_CONSULTED);
        });
        assertThat(((ForgedTokenException) heard.get(0)).reason()).contains("unsigned");
        assertThat(((ForgedTokenException) heard.get(2)).reason()).contains("key 'k0'");

        // the next real holder is accepted: max_seen never moved
        FencingToken next = signer.sign(new FencingToken("accounts", 6, "client-2"));
        assertThat(bound(next, () -> guard.invoke(repo, new Object[0], writes::incrementAndGet))).isEqualTo(2);
        assertThat(store.maxSeen("accounts")).hasValue(6);
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void aSignatureForAnotherResourceIsRefused() throws Throwable {
        FencingToken forOne = signer.sign(new FencingToken("accounts:1", 9, "h"));
        FencePoint keyed = new FencePoint("AccountRepository.save(Account)", "accounts", args -> args[0], "#id",
                false, new FencingMetrics(registry));
        FencingToken replayed = new FencingToken("accounts:2", 9, "h", forOne.signature());
        assertThatThrownBy(() -> bound(replayed, () -> guard.invoke(keyed, new Object[]{2}, writes::incrementAndGet)))
                .isInstanceOf(ForgedTokenException.class).hasMessageContaining("'accounts:2'");
        assertThat(bound(forOne, () -> guard.invoke(keyed, new Object[]{1}, writes::incrementAndGet))).isEqualTo(1);
        assertThat(store.maxSeen("accounts:2")).isEmpty();
    }

    @Test
    void aSigningIssuerFeedsAVerifyingGuard() throws Throwable {
        FenceGuard both = FenceGuard.builder(store).verifier(verifier)
                .issuer(new SigningTokenIssuer(new InMemoryTokenIssuer(), signer)).build();
        FencePoint service = new FencePoint("TransferService.deposit(long,long)", "accounts", null, null, true,
                new FencingMetrics(registry));
        Object result = both.invoke(service, new Object[0],
                () -> both.invoke(repo, new Object[0], writes::incrementAndGet));
        assertThat(result).isEqualTo(1);
        assertThat(registry.get(FencingMetrics.CHECKS).tag("outcome", "accepted").counter().count()).isEqualTo(1);
    }

    @Test
    void anObservedCheckOfAForgedTokenHasOutcomeForgedAndTheError() {
        List<Observation.Context> stopped = new ArrayList<>();
        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }

            @Override
            public void onStop(Observation.Context context) {
                stopped.add(context);
            }
        });
        FenceGuard observed = FenceGuard.builder(store).verifier(verifier).observations(observations).build();
        assertThatThrownBy(() -> bound(new FencingToken("accounts", 9, "evil"),
                () -> observed.invoke(repo, new Object[0], writes::incrementAndGet)))
                .isInstanceOf(ForgedTokenException.class);
        assertThat(stopped).singleElement().satisfies(context -> {
            assertThat(context.getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("forged");
            assertThat(context.getError()).isInstanceOf(ForgedTokenException.class);
        });
        assertThat(store.maxSeen("accounts")).isEmpty();
    }

    @Test
    void withoutAVerifierTheForgeryStillWorksWhichIsWhatSigningIsFor() throws Throwable {
        FenceGuard open = new FenceGuard(store);
        bound(new FencingToken("accounts", Long.MAX_VALUE, "evil"),
                () -> open.invoke(repo, new Object[0], writes::incrementAndGet));
        assertThat(store.maxSeen("accounts")).hasValue(Long.MAX_VALUE);
    }

    private static byte[] secret() {
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        return secret;
    }
}
