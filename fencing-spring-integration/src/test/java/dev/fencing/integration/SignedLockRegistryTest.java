package dev.fencing.integration;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.SigningTokenIssuer;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Signed tokens and a {@link FencedLockRegistry} bean (a new user's trial: with the starter's signing on, every write
 * under the registry's locks was refused as forged, health UP, since the registry acquired from the unsigned issuer
 * bean): the bean signs with the context's {@link TokenSigner}, so the checks accept its holders' writes; a verifier
 * with nothing to sign fails startup naming the registry; a registry that is not a bean is refused at its first write,
 * the refusal saying what signs.
 */
@Timeout(30)
class SignedLockRegistryTest {

    private static final byte[] SECRET = new SecureRandom().generateSeed(32);

    static class Orders {
        private final Map<Long, String> rows = new ConcurrentHashMap<>();

        @Fenced(resource = "orders", key = "#id")
        public void save(long id, String value) {
            rows.put(id, value);
        }

        public String value(long id) {
            return rows.get(id);
        }
    }

    @Configuration
    @EnableFencing
    static class Verifying {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        TokenVerifier tokenVerifier() {
            return new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", SECRET)));
        }

        @Bean
        FencedLockRegistry lockRegistry(TokenIssuer tokenIssuer) {
            return new FencedLockRegistry(tokenIssuer, "orders:");
        }

        @Bean
        Orders orders() {
            return new Orders();
        }
    }

    @Configuration
    static class Signing extends Verifying {
        @Bean
        TokenSigner tokenSigner() {
            return TokenSigner.hmac("k1", SECRET);
        }
    }

    @Configuration
    static class AlreadySigning extends Signing {
        @Override
        @Bean
        FencedLockRegistry lockRegistry(TokenIssuer tokenIssuer) {
            return new FencedLockRegistry(new SigningTokenIssuer(tokenIssuer, tokenSigner()), "orders:");
        }
    }

    @Test
    void theBeanSignsWithTheContextsSignerSoItsHoldersWritesAreAcceptedAndOneThatIsNotABeanIsRefusedSayingWhy() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Signing.class)) {
            Orders orders = context.getBean(Orders.class);
            FencedLock lock = context.getBean(FencedLockRegistry.class).obtain(42L);
            lock.lock();
            try {
                assertThat(lock.token().isSigned()).as("signed: %s", lock.token()).isTrue();
                orders.save(42, "held");
            } finally {
                lock.unlock();
            }
            assertThat(orders.value(42)).isEqualTo("held");

            FencedLock byHand = new FencedLockRegistry(context.getBean(TokenIssuer.class), "orders:").obtain(7L);
            byHand.lock();
            try {
                assertThat(byHand.token().isSigned()).isFalse();
                assertThatThrownBy(() -> orders.save(7, "unsigned")).isInstanceOf(ForgedTokenException.class)
                        .hasMessageContaining("the token is unsigned")
                        .hasMessageContaining("new SigningTokenIssuer(issuer, signer)");
            } finally {
                byHand.unlock();
            }
            assertThat(orders.value(7)).isNull();
        }
    }

    @Test
    void anIssuerThatSignsAlreadyIsNotSignedTwice() {
        try (AnnotationConfigApplicationContext context =
                new AnnotationConfigApplicationContext(AlreadySigning.class)) {
            FencedLockRegistry registry = context.getBean(FencedLockRegistry.class);
            assertThat(registry.toString()).contains("issuer=SigningTokenIssuer");
            FencedLock lock = registry.obtain(43L);
            lock.lock();
            try {
                context.getBean(Orders.class).save(43, "held");
            } finally {
                lock.unlock();
            }
            assertThat(context.getBean(Orders.class).value(43)).isEqualTo("held");
        }
    }

    @Test
    void aVerifierWithNothingToSignTheRegistrysTokensFailsStartupNamingIt() {
        Throwable thrown = catchThrowable(() -> new AnnotationConfigApplicationContext(Verifying.class).close());
        Throwable cause = thrown;
        while (cause != null && !(cause instanceof FencingConfigurationException)) {
            cause = cause.getCause();
        }
        assertThat(cause).as("a FencingConfigurationException in %s", thrown).isNotNull();
        assertThat(cause.getMessage()).contains("FencedLockRegistry (prefix 'orders:')").contains("does not sign")
                .contains("would be refused as forged").contains("fencing.signing.current-key-id");
    }
}
