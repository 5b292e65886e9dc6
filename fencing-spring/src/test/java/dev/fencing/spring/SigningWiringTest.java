package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.security.SecureRandom;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @EnableFencing} with signing beans: a {@link TokenVerifier} bean makes every check verify first, a
 * {@link TokenSigner} bean signs what acquiring points take; ambiguous or mismatched beans fail startup naming them.
 */
@Timeout(60)
class SigningWiringTest {

    static final byte[] SECRET = secret();
    static final byte[] OTHER_SECRET = secret();

    static byte[] secret() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return bytes;
    }

    /** The store, issuer, registry and the ledger that checks; subclasses add signing beans and the client side. */
    static class Resource {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(Duration.ofSeconds(5), 8);
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }

        @Bean
        TokenVerifier tokenVerifier() {
            return new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", SECRET)));
        }
    }

    static class Client extends Resource {
        @Bean
        Fixtures.Bookkeeper bookkeeper(Fixtures.Ledger ledger) {
            return new Fixtures.Bookkeeper(ledger);
        }
    }

    @Configuration
    @EnableFencing
    static class Signed extends Client {
        @Bean
        TokenSigner tokenSigner() {
            return TokenSigner.hmac("k1", SECRET);
        }
    }

    @Configuration
    @EnableFencing
    static class TwoVerifiers extends Resource {
        @Bean
        TokenVerifier secondVerifier() {
            return new TokenVerifier(KeyRing.of(VerificationKey.hmac("k2", OTHER_SECRET)));
        }
    }

    @Configuration
    @EnableFencing
    static class SignerWithAnotherSecret extends Client {
        @Bean
        TokenSigner tokenSigner() {
            return TokenSigner.hmac("k1", OTHER_SECRET);
        }
    }

    @Configuration
    @EnableFencing
    static class VerifierWithoutSigner extends Client {
    }

    @Configuration
    @EnableFencing
    static class VerifierOnly extends Resource {
    }

    private AnnotationConfigApplicationContext context;

    @AfterEach
    void close() {
        if (context != null) {
            context.close();
        }
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void acquiredTokensAreSignedAndAcceptedWhileAnUnsignedOneIsRefusedAsForgedBeforeTheStore() {
        context = new AnnotationConfigApplicationContext(Signed.class);
        Fixtures.Bookkeeper bookkeeper = context.getBean(Fixtures.Bookkeeper.class);
        InMemoryFenceStore store = context.getBean(InMemoryFenceStore.class);

        FencingToken first = bookkeeper.book("one");
        assertThat(first.isSigned()).as("signed by the guard's SigningTokenIssuer").isTrue();
        assertThat(first.signature().keyId()).isEqualTo("k1");
        assertThat(context.getBean(TokenIssuer.class)).as("the issuer bean itself is left as it is")
                .isInstanceOf(InMemoryTokenIssuer.class);
        assertThat(store.maxSeen("ledger")).hasValue(first.value());

        Fixtures.Ledger ledger = context.getBean(Fixtures.Ledger.class);
        FencingToken forged = new FencingToken("ledger", Long.MAX_VALUE, "evil");
        try (FencingScope ignored = FencingContext.bind(forged)) {
            assertThatThrownBy(() -> ledger.append("forged"))
                    .isInstanceOfSatisfying(ForgedTokenException.class, e -> {
                        assertThat(e.resource()).isEqualTo("ledger");
                        assertThat(e.operation()).contains("append");
                        assertThat(e.getMessage()).contains("unsigned").doesNotContain(new String(SECRET));
                    });
        }
        assertThat(store.maxSeen("ledger")).as("max_seen untouched").hasValue(first.value());
        assertThat(context.getBean(MeterRegistry.class).get("fencing.checks").tag("resource", "ledger")
                .tag("outcome", "forged").counter().count()).isEqualTo(1.0);

        FencingToken second = bookkeeper.book("two");
        assertThat(second.value()).isGreaterThan(first.value());
        assertThat(store.maxSeen("ledger")).hasValue(second.value());
    }

    @Test
    void twoVerifierBeansFailStartupNamingBoth() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(TwoVerifiers.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("2 TokenVerifier beans")
                .hasMessageContaining("tokenVerifier").hasMessageContaining("secondVerifier");
    }

    @Test
    void aSignerWhoseTokensTheVerifierRefusesFailsStartupWithoutKeyMaterial() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(SignerWithAnotherSecret.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("key 'k1'").hasMessageContaining("does not match")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(new String(OTHER_SECRET)));
    }

    @Test
    void aVerifierWithAcquiringPointsAndNothingThatSignsFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(VerifierWithoutSigner.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("does not sign").hasMessageContaining("TokenSigner");
    }

    @Test
    void aVerifierWithoutAcquiringPointsStartsWithoutASigner() {
        context = new AnnotationConfigApplicationContext(VerifierOnly.class);
        Fixtures.Ledger ledger = context.getBean(Fixtures.Ledger.class);
        FencingToken signed = TokenSigner.hmac("k1", SECRET).sign(new FencingToken("ledger", 7, "caller"));
        try (FencingScope ignored = FencingContext.bind(signed)) {
            ledger.append("signed");
        }
        assertThat(context.getBean(InMemoryFenceStore.class).maxSeen("ledger")).hasValue(7);
    }
}
