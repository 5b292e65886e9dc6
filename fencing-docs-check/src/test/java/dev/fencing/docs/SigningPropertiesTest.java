package dev.fencing.docs;

import dev.fencing.boot.autoconfigure.FencingAutoConfiguration;
import dev.fencing.boot.autoconfigure.FencingSigningAutoConfiguration;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.Verification;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import java.io.StringReader;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code fencing.signing.*} setups README.md "Forged tokens" shows (signing.properties) configure what the README
 * says: HMAC on every application, Ed25519 with a signer on issuers only, and the two states of a rotation.
 */
@Timeout(60)
class SigningPropertiesTest {

    static final String OLD_SECRET = secret();
    static final String NEW_SECRET = secret();
    static final KeyPair ED25519 = ed25519();

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({FencingAutoConfiguration.class, FencingSigningAutoConfiguration.class})
    static class Application {
    }

    static String secret() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    static KeyPair ed25519() {
        try {
            return KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void run(String region, Consumer<ConfigurableApplicationContext> check) throws Exception {
        Properties shown = new Properties();
        shown.load(new StringReader(String.join("\n",
                SnippetCheckTest.region(SnippetCheckTest.repositoryRoot()
                        .resolve("fencing-docs-check/src/test/resources/dev/fencing/docs/signing.properties"),
                        region))));
        List<String> properties = new ArrayList<>(List.of("fencing.store.type=in-memory",
                "FENCING_KEY_2026_11=" + OLD_SECRET, "FENCING_KEY_2027_02=" + NEW_SECRET,
                "FENCING_PRIVATE_KEY_2026_11=" + Base64.getEncoder().encodeToString(ED25519.getPrivate().getEncoded()),
                "FENCING_PUBLIC_KEY_2026_11=" + Base64.getEncoder().encodeToString(ED25519.getPublic().getEncoded())));
        shown.forEach((key, value) -> properties.add(key + "=" + value));
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class)
                .web(WebApplicationType.NONE).properties(properties.toArray(String[]::new)).run()) {
            check.accept(context);
        }
    }

    private static FencingToken token() {
        return new FencingToken("accounts:1", 1, "h");
    }

    @Test
    void hmacSignsAndVerifiesWithOneSecret() throws Exception {
        run("hmac", context -> {
            FencingToken signed = context.getBean(TokenSigner.class).sign(token());
            assertThat(signed.signature().keyId()).isEqualTo("2026-11");
            assertThat(context.getBean(TokenVerifier.class).verify(signed)).isEqualTo(Verification.VALID);
        });
    }

    @Test
    void ed25519IssuersSignAndResourcesOnlyVerify() throws Exception {
        FencingToken[] signed = new FencingToken[1];
        run("ed25519-issuer", context -> signed[0] = context.getBean(TokenSigner.class).sign(token()));
        run("ed25519-resource", context -> {
            assertThat(context.getBeanNamesForType(TokenSigner.class)).isEmpty();
            assertThat(context.getBean(TokenVerifier.class).verify(signed[0])).isEqualTo(Verification.VALID);
        });
    }

    @Test
    void aRotationAcceptsBothKeysThenRefusesTheRetiredOne() throws Exception {
        FencingToken old = TokenSigner.hmac("2026-11", Base64.getDecoder().decode(OLD_SECRET)).sign(token());
        run("rotation-overlap", context -> {
            TokenVerifier verifier = context.getBean(TokenVerifier.class);
            assertThat(verifier.verify(old)).isEqualTo(Verification.VALID);
            FencingToken current = context.getBean(TokenSigner.class).sign(token());
            assertThat(current.signature().keyId()).isEqualTo("2027-02");
            assertThat(verifier.verify(current)).isEqualTo(Verification.VALID);
        });
        run("rotation-retired", context -> {
            TokenVerifier verifier = context.getBean(TokenVerifier.class);
            assertThat(verifier.verify(old)).isEqualTo(Verification.RETIRED_KEY);
            assertThat(verifier.verify(context.getBean(TokenSigner.class).sign(token()))).isEqualTo(Verification.VALID);
        });
    }
}
