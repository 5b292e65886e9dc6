package dev.fencing.boot.autoconfigure;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.signing.SignatureScheme;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.Verification;
import dev.fencing.signing.VerificationKey;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.lang.reflect.Method;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code fencing.signing.*}: the verifier and signer the properties describe, the fence verifying and signing with
 * them, an Ed25519 resource holding the public key only, and a clear startup failure naming the property (never the
 * key) for each way the keys can be wrong.
 */
@Timeout(60)
@ExtendWith(OutputCaptureExtension.class)
class FencingSigningAutoConfigurationTest {

    static final String SECRET = base64(32);
    static final String SHORT_SECRET = base64(16);
    static final KeyPair ED25519 = ed25519();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingSigningAutoConfiguration.class))
            .withPropertyValues("fencing.store.type=in-memory");

    static String base64(int bytes) {
        byte[] secret = new byte[bytes];
        new SecureRandom().nextBytes(secret);
        return Base64.getEncoder().encodeToString(secret);
    }

    static KeyPair ed25519() {
        try {
            return KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static String publicKeyPem() {
        return "-----BEGIN PUBLIC KEY-----\n" + Base64.getMimeEncoder().encodeToString(ED25519.getPublic().getEncoded())
                + "\n-----END PUBLIC KEY-----";
    }

    static String privateKeyBase64() {
        return Base64.getEncoder().encodeToString(ED25519.getPrivate().getEncoded());
    }

    /** A client side that acquires and a ledger that checks, with an in-memory issuer. */
    @Configuration(proxyBeanMethods = false)
    static class Application {
        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(java.time.Duration.ofSeconds(5), 8);
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        Desk desk(Ledger ledger) {
            return new Desk(ledger);
        }
    }

    static class Ledger {
        @Fenced(resource = "ledger")
        public FencingToken write() {
            return FencingContext.current("ledger");
        }
    }

    static class Desk {
        private final Ledger ledger;

        Desk(Ledger ledger) {
            this.ledger = ledger;
        }

        @Fenced(resource = "ledger", acquire = true)
        public FencingToken book() {
            return ledger.write();
        }
    }

    @Test
    void noSigningPropertiesNoSigningBeans() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(TokenVerifier.class).doesNotHaveBean(TokenSigner.class);
        });
    }

    @Test
    void hmacWithACurrentKeySignsWhatTheFenceAcquiresAndVerifiesEveryCheck() {
        runner.withUserConfiguration(Application.class).withPropertyValues("fencing.signing.scheme=hmac-sha256",
                "fencing.signing.current-key-id=k2", "fencing.signing.keys.k1.retired=true",
                "fencing.signing.keys.k2.secret=" + SECRET).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(TokenVerifier.class)
                            .hasSingleBean(TokenSigner.class);
                    TokenVerifier verifier = context.getBean(TokenVerifier.class);
                    assertThat(verifier.keyRing().activeKeyIds()).containsExactly("k2");
                    assertThat(verifier.keyRing().retiredKeyIds()).containsExactly("k1");
                    assertThat(context.getBean(TokenIssuer.class)).as("the issuer bean is left as it is")
                            .isInstanceOf(InMemoryTokenIssuer.class);

                    FencingToken written = context.getBean(Desk.class).book();
                    assertThat(written.isSigned()).isTrue();
                    assertThat(written.signature().keyId()).isEqualTo("k2");
                    assertThat(verifier.verify(written)).isEqualTo(Verification.VALID);
                });
    }

    @Test
    void anEd25519ResourceWithThePublicKeyOnlyVerifiesAndHasNothingToSignWith() {
        TokenSigner issuer = TokenSigner.ed25519("ed1", ED25519.getPrivate());
        runner.withPropertyValues("fencing.signing.scheme=ed25519", "fencing.signing.current-key-id=ed1",
                "fencing.signing.keys.ed1.public-key=" + publicKeyPem()).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(TokenVerifier.class)
                            .doesNotHaveBean(TokenSigner.class);
                    TokenVerifier verifier = context.getBean(TokenVerifier.class);
                    FencingToken signed = issuer.sign(new FencingToken("accounts:1", 3, "h"));
                    assertThat(verifier.verify(signed)).isEqualTo(Verification.VALID);
                    assertThat(verifier.verify(signed.withSignature(null))).isEqualTo(Verification.UNSIGNED);
                    FencingProperties.Signing signing = context.getBean(FencingProperties.class).getSigning();
                    assertThat(SigningKeys.signer(signing)).as("no private key, no signer").isNull();
                });
        for (Class<?> verifying : new Class<?>[] {TokenVerifier.class, VerificationKey.class}) {
            assertThat(Arrays.stream(verifying.getMethods()).map(Method::getName))
                    .as(verifying.getSimpleName() + " has no way to sign").noneMatch(name -> name.startsWith("sign"));
        }
    }

    @Test
    void anEd25519IssuerSignsWithThePrivateKeyAndVerifiesWithThePublicOne() {
        runner.withUserConfiguration(Application.class).withPropertyValues("fencing.signing.scheme=ed25519",
                "fencing.signing.current-key-id=ed1", "fencing.signing.keys.ed1.public-key=" + publicKeyPem(),
                "fencing.signing.keys.ed1.private-key=" + privateKeyBase64()).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(TokenSigner.class).scheme()).isEqualTo(SignatureScheme.ED25519);
                    FencingToken written = context.getBean(Desk.class).book();
                    assertThat(context.getBean(TokenVerifier.class).verify(written)).isEqualTo(Verification.VALID);
                });
    }

    @Test
    void anApplicationsOwnSignerReplacesTheStartersAndMustSignWhatTheVerifierAccepts() {
        runner.withUserConfiguration(Application.class)
                .withBean(TokenSigner.class, () -> TokenSigner.hmac("k1", Base64.getDecoder().decode(base64(32))))
                .withPropertyValues("fencing.signing.scheme=hmac-sha256", "fencing.signing.current-key-id=k1",
                        "fencing.signing.keys.k1.secret=" + SECRET).run(context -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).contains("signs tokens the TokenVerifier refuses")
                            .contains("key 'k1'").doesNotContain(SECRET);
                    assertThat(analysis.getAction()).contains("same keys");
                });
    }

    @Test
    void aTooShortSecretFailsStartupNamingThePropertyNotTheSecret(CapturedOutput output) {
        assertStartupFails(output, "fencing.signing.keys.k1.secret", "256 bits",
                "fencing.signing.scheme=hmac-sha256", "fencing.signing.keys.k1.secret=" + SHORT_SECRET);
    }

    @Test
    void aMisspeltKeyPropertyFailsStartupInsteadOfBeingIgnored(CapturedOutput output) {
        // a rotation's last step, misspelt: the old key would go on verifying
        assertStartupFails(output, "fencing.signing.keys.k1.retierd", "not a property of a signing key",
                "fencing.signing.scheme=hmac-sha256", "fencing.signing.current-key-id=k2",
                "fencing.signing.keys.k1.secret=" + SECRET, "fencing.signing.keys.k1.retierd=true",
                "fencing.signing.keys.k2.secret=" + SECRET.replace('A', 'B'));
    }

    @Test
    void everySpellingOfTheKnownKeyPropertiesIsAccepted() {
        runner.withPropertyValues("fencing.signing.scheme=hmac-sha256", "fencing.signing.current-key-id=k2",
                "fencing.signing.keys.k1.secret=" + SECRET, "fencing.signing.keys.k1.Retired=true",
                "fencing.signing.keys.k2.secret=" + SECRET.replace('A', 'B'))
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void aSecretThatIsNotBase64FailsStartupNamingTheProperty(CapturedOutput output) {
        assertStartupFails(output, "fencing.signing.keys.k1.secret", "not valid Base64",
                "fencing.signing.scheme=hmac-sha256", "fencing.signing.keys.k1.secret=" + SECRET + "!*");
    }

    @Test
    void aMalformedPublicKeyFailsStartupNamingTheProperty(CapturedOutput output) {
        assertStartupFails(output, "fencing.signing.keys.ed1.public-key", "Ed25519",
                "fencing.signing.scheme=ed25519", "fencing.signing.keys.ed1.public-key=" + base64(20));
    }

    @Test
    void anUnknownCurrentKeyIdFailsStartup(CapturedOutput output) {
        assertStartupFails(output, "fencing.signing.current-key-id is 'k9'", "not one of",
                "fencing.signing.scheme=hmac-sha256", "fencing.signing.current-key-id=k9",
                "fencing.signing.keys.k1.secret=" + SECRET);
    }

    @Test
    void aRetiredCurrentKeyFailsStartup(CapturedOutput output) {
        assertStartupFails(output, "fencing.signing.current-key-id is 'k1'", "retired",
                "fencing.signing.scheme=hmac-sha256", "fencing.signing.current-key-id=k1",
                "fencing.signing.keys.k1.secret=" + SECRET, "fencing.signing.keys.k1.retired=true",
                "fencing.signing.keys.k2.secret=" + base64(32));
    }

    /** A current key id alone (its keys in a profile not active) turned nothing on, and unsigned tokens wrote. */
    @Test
    void aCurrentKeyIdWithoutKeysFailsStartup(CapturedOutput output) {
        assertStartupFails(output, "fencing.signing.current-key-id is ('k1'), with no key",
                "profile that is not active", "fencing.signing.current-key-id=k1");
    }

    @Test
    void keysWithoutASchemeFailStartup(CapturedOutput output) {
        assertStartupFails(output, "fencing.signing.scheme is not set", "hmac-sha256 or ed25519",
                "fencing.signing.keys.k1.secret=" + SECRET);
    }

    @Test
    void aSecretUnderEd25519FailsStartupNamingIt(CapturedOutput output) {
        assertStartupFails(output, "fencing.signing.keys.k1.secret is set", "ed25519",
                "fencing.signing.scheme=ed25519", "fencing.signing.keys.k1.secret=" + SECRET);
    }

    @Test
    void aPrivateKeyWithoutCurrentKeyIdFailsStartup(CapturedOutput output) {
        assertStartupFails(output, "current-key-id is not", "private-key",
                "fencing.signing.scheme=ed25519", "fencing.signing.keys.ed1.public-key=" + publicKeyPem(),
                "fencing.signing.keys.ed1.private-key=" + privateKeyBase64());
    }

    @Test
    void aKeyRetiredUnderAnotherCaseOfItsIdFailsStartupInsteadOfStillVerifying(CapturedOutput output) {
        // a rotation's last step with the id in another case: "key1" is retired, "Key1" goes on verifying
        assertStartupFails(output, "fencing.signing.keys", "differ only in case",
                "fencing.signing.scheme=hmac-sha256", "fencing.signing.current-key-id=k2",
                "fencing.signing.keys.Key1.secret=" + SECRET, "fencing.signing.keys.key1.retired=true",
                "fencing.signing.keys.k2.secret=" + SECRET.replace('A', 'B'));
    }

    @Test
    void aKeyRetiredByAnEnvironmentVariableFailsStartupInsteadOfStillVerifying(CapturedOutput output) {
        // FENCING_SIGNING_KEYS_KEY1_RETIRED binds to the id "key1": the key configured as "Key1" stayed active
        runner.withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
                        new org.springframework.core.env.SystemEnvironmentPropertySource("systemEnvironment",
                                java.util.Map.of("FENCING_SIGNING_KEYS_KEY1_RETIRED", "true"))))
                .withPropertyValues("fencing.signing.scheme=hmac-sha256", "fencing.signing.current-key-id=k2",
                        "fencing.signing.keys.Key1.secret=" + SECRET,
                        "fencing.signing.keys.k2.secret=" + SECRET.replace('A', 'B'))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("Key1")
                            .hasMessageContaining("key1").hasMessageContaining("differ only in case");
                });
    }

    private void assertStartupFails(CapturedOutput output, String named, String why, String... properties) {
        runner.withPropertyValues(properties).run(context -> {
            assertThat(context).hasFailed();
            Throwable failure = context.getStartupFailure();
            FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(failure);
            assertThat(analysis).as("the starter's failure analyzer explains it").isNotNull();
            assertThat(analysis.getDescription()).contains(named).contains(why);
            assertThat(analysis.getAction()).contains("fencing.signing");
            for (Throwable t = failure; t != null; t = t.getCause()) {
                assertThat(String.valueOf(t.getMessage())).doesNotContain(SECRET).doesNotContain(SHORT_SECRET)
                        .doesNotContain(privateKeyBase64());
            }
        });
        assertThat(output.getAll()).as("no key material in the log").doesNotContain(SECRET)
                .doesNotContain(SHORT_SECRET).doesNotContain(privateKeyBase64());
    }

    @Test
    void theSanitizerMasksSecretsAndPrivateKeysHoweverSpelledAndLeavesTheRestAlone() {
        SigningKeySanitizer sanitizer = new SigningKeySanitizer();
        for (String key : new String[] {"fencing.signing.keys.k1.secret", "fencing.signing.keys.k1.private-key",
                "fencing.signing.keys.k1.privateKey", "FENCING_SIGNING_KEYS_K1_SECRET",
                "FENCING_SIGNING_KEYS_K1_PRIVATE_KEY"}) {
            assertThat(sanitizer.apply(new SanitizableData(null, key, SECRET)).getValue()).as(key)
                    .isEqualTo(SanitizableData.SANITIZED_VALUE);
        }
        for (String key : new String[] {"fencing.signing.keys.k1.public-key", "fencing.signing.current-key-id",
                "fencing.signing.scheme", "spring.datasource.url"}) {
            assertThat(sanitizer.apply(new SanitizableData(null, key, "value")).getValue()).as(key)
                    .isEqualTo("value");
        }
    }

    @Test
    void theSanitizerAlsoMasksWhereverTheConfiguredSecretAppears() {
        // the README's setup: fencing.signing.keys.k1.secret=${FENCING_KEY_K1}; /actuator/env with show-values=always
        // lists the environment variable under systemEnvironment, by a name the library cannot guess
        FencingProperties properties = new FencingProperties();
        FencingProperties.Key key = new FencingProperties.Key();
        key.setSecret(SECRET);
        properties.getSigning().getKeys().put("k1", key);
        SigningKeySanitizer sanitizer = new SigningKeySanitizer(
                () -> SigningKeySanitizer.secretsOf(properties.getSigning()));
        assertThat(sanitizer.apply(new SanitizableData(null, "FENCING_KEY_K1", SECRET)).getValue())
                .isEqualTo(SanitizableData.SANITIZED_VALUE);
        assertThat(sanitizer.apply(new SanitizableData(null, "sun.java.command",
                "app.jar --fencing.signing.keys.k1.secret=" + SECRET)).getValue())
                .isEqualTo(SanitizableData.SANITIZED_VALUE);
        assertThat(sanitizer.apply(new SanitizableData(null, "HOME", "/root")).getValue()).isEqualTo("/root");
    }
}
