package dev.fencing.signing;

import dev.fencing.FencingConfigurationException;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenSignature;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The verifier: fail closed, its per-instance cache, and that the resource side has no way to sign. */
class TokenVerifierTest {

    private final Keys.Pair hmac = Keys.Pair.of(SignatureScheme.HMAC_SHA256, "k1");

    @Test
    void aTokenCheckedManyTimesIsVerifiedOnce() {
        TokenVerifier verifier = hmac.verifier();
        FencingToken token = hmac.signer().sign(new FencingToken("accounts:1", 7, "h"));
        for (int i = 0; i < 50; i++) {
            assertThat(verifier.verify(token)).isEqualTo(Verification.VALID);
        }
        assertThat(verifier.verificationsRun()).isEqualTo(1);

        // an equal token is another instance: verified on its own
        assertThat(verifier.verify(FencingToken.parse(token.toText()))).isEqualTo(Verification.VALID);
        assertThat(verifier.verificationsRun()).isEqualTo(2);
    }

    @Test
    void refusalsAreNeverCachedAndAVerifierWithoutCacheVerifiesEveryTime() {
        TokenVerifier verifier = hmac.verifier();
        FencingToken unsigned = new FencingToken("accounts:1", 7, "h");
        assertThat(verifier.verify(unsigned)).isEqualTo(Verification.UNSIGNED);
        assertThat(verifier.verify(unsigned)).isEqualTo(Verification.UNSIGNED);
        assertThat(verifier.verificationsRun()).isEqualTo(2);

        TokenVerifier uncached = new TokenVerifier(KeyRing.of(hmac.key()), 0);
        FencingToken token = hmac.signer().sign(unsigned);
        for (int i = 0; i < 5; i++) {
            assertThat(uncached.verify(token)).isEqualTo(Verification.VALID);
        }
        assertThat(uncached.verificationsRun()).isEqualTo(5);
        assertThatThrownBy(() -> new TokenVerifier(KeyRing.of(hmac.key()), -1))
                .hasMessageContaining("cacheSize").hasMessageContaining("-1");
    }

    @Test
    void aCacheCollisionOnlyCostsAVerification() {
        TokenVerifier oneSlot = new TokenVerifier(KeyRing.of(hmac.key()), 1);
        FencingToken a = hmac.signer().sign(new FencingToken("r", 1, "a"));
        FencingToken b = hmac.signer().sign(new FencingToken("r", 2, "b"));
        FencingToken forged = new FencingToken("r", Long.MAX_VALUE, "b", b.signature());
        for (int i = 0; i < 3; i++) {
            assertThat(oneSlot.verify(a)).isEqualTo(Verification.VALID);
            assertThat(oneSlot.verify(b)).isEqualTo(Verification.VALID);
            assertThat(oneSlot.verify(forged)).isEqualTo(Verification.BAD_SIGNATURE);
        }
        assertThat(oneSlot.verificationsRun()).isEqualTo(9);
    }

    @Test
    void threadsSharingAVerifierAndItsMacsGetEveryVerdictRight() throws Exception {
        TokenVerifier shared = new TokenVerifier(KeyRing.of(hmac.key()), 8); // a small cache: many collisions
        List<FencingToken> valid = new java.util.ArrayList<>();
        List<FencingToken> forged = new java.util.ArrayList<>();
        for (int i = 1; i <= 64; i++) {
            FencingToken token = hmac.signer().sign(new FencingToken("r:" + i, i, "h" + i));
            valid.add(token);
            forged.add(new FencingToken(token.resource(), i + 1, token.holder(), token.signature()));
        }
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> results = new java.util.ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int offset = t;
                results.add(pool.submit(() -> {
                    int wrong = 0;
                    for (int round = 0; round < 200; round++) {
                        int i = (round * 7 + offset) % valid.size();
                        wrong += shared.verify(valid.get(i)) == Verification.VALID ? 0 : 1;
                        wrong += shared.verify(forged.get(i)) == Verification.BAD_SIGNATURE ? 0 : 1;
                    }
                    return wrong;
                }));
            }
            for (Future<Integer> result : results) {
                assertThat(result.get(30, TimeUnit.SECONDS)).isZero();
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void requireValidThrowsAForgedTokenExceptionNamingResourceAndOperationOnly() {
        TokenVerifier verifier = hmac.verifier();
        FencingToken forged = new FencingToken("accounts:3", Long.MAX_VALUE, "evil",
                TokenSignature.of("k1", new byte[32]));
        assertThatThrownBy(() -> verifier.requireValid(forged, "accounts:3", "PUT /accounts/3"))
                .isInstanceOf(ForgedTokenException.class)
                .hasMessageContaining("'accounts:3'").hasMessageContaining("PUT /accounts/3")
                .hasMessageContaining("key 'k1'").hasMessageContaining("does not match")
                .message().doesNotContain(forged.signature().toText());
        FencingToken valid = hmac.signer().sign(new FencingToken("accounts:3", 4, "h"));
        assertThat(verifier.requireValid(valid, "accounts:3", null)).isSameAs(valid);
    }

    @Test
    void anEd25519VerifierWithOnlyThePublicKeyVerifiesButNothingOnTheResourceSideCanSign() {
        KeyPair pair = Keys.ed25519();
        TokenVerifier verifier = new TokenVerifier(KeyRing.of(VerificationKey.ed25519("k1", pair.getPublic())));
        FencingToken token = TokenSigner.ed25519("k1", pair.getPrivate()).sign(new FencingToken("r", 3, "h"));
        assertThat(verifier.verify(token)).isEqualTo(Verification.VALID);

        // no public method of the verifying types yields a signature or a token that was not passed in
        for (Class<?> type : List.of(TokenVerifier.class, KeyRing.class, VerificationKey.class)) {
            for (Method method : type.getMethods()) {
                assertThat(method.getName()).as(type.getSimpleName()).doesNotStartWith("sign");
                assertThat(method.getReturnType()).as(type.getSimpleName() + "." + method.getName())
                        .isNotIn(TokenSignature.class, byte[].class, TokenSigner.class, PrivateKey.class);
            }
        }
        // and the only way to a signer is through a private key (Ed25519) or the shared secret (HMAC)
        List<Method> factories = Arrays.stream(TokenSigner.class.getMethods())
                .filter(m -> Modifier.isStatic(m.getModifiers()) && m.getReturnType() == TokenSigner.class).toList();
        assertThat(factories).extracting(m -> Arrays.asList(m.getParameterTypes()))
                .containsExactlyInAnyOrder(List.of(String.class, byte[].class),
                        List.of(String.class, PrivateKey.class));
        assertThat(TokenSigner.class.getConstructors()).isEmpty();
    }

    @Test
    void aKeyRingRefusesDuplicateIdsAndAnEmptyRing() {
        assertThatThrownBy(() -> KeyRing.of(hmac.key(), VerificationKey.hmac("k1", Keys.secret())))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("two keys with id 'k1'");
        assertThatThrownBy(KeyRing::of).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("no key");
        assertThatThrownBy(() -> KeyRing.of(hmac.key()).retire("k1"))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("without an active key");
        KeyRing ring = KeyRing.of(hmac.key()).with(VerificationKey.hmac("k2", Keys.secret())).retire("k1");
        assertThat(ring.activeKeyIds()).containsExactly("k2");
        assertThat(ring.retiredKeyIds()).containsExactly("k1");
        assertThatThrownBy(() -> ring.with(VerificationKey.hmac("k1", Keys.secret())))
                .hasMessageContaining("retired");
    }
}
