package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Signed tokens from the {@code fencing.signing.*} properties: a {@link TokenVerifier} over the configured keys,
 * and a {@link TokenSigner} when the current key's secret or private key is here. {@code @EnableFencing} (which the
 * starter turns on) verifies every check with the verifier and signs the tokens its acquiring points take with the
 * signer, whatever the {@code TokenIssuer} bean is (the starter's or the application's own, left as it is); the
 * {@code Fencing-Token} filter refuses forged headers with it. Each bean backs off when the application defines one.
 * A malformed or too short key, an unknown or retired current key fails startup naming the property.
 */
@AutoConfiguration(before = FencingAutoConfiguration.class)
@ConditionalOnClass(TokenVerifier.class)
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@Conditional(FencingSigningAutoConfiguration.SigningConfigured.class)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingSigningAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(TokenVerifier.class)
    TokenVerifier fencingTokenVerifier(FencingProperties properties, Environment environment) {
        requireKnownKeyProperties(Binder.get(environment));
        return SigningKeys.verifier(properties.getSigning());
    }

    /** The properties a key may have; anything else under a key is a typo (a {@code retierd=true} retires nothing). */
    static final Set<String> KEY_PROPERTIES = Set.of("secret", "public-key", "private-key", "retired");

    /**
     * Fails on a property under {@code fencing.signing.keys.<id>} that is not one of {@link #KEY_PROPERTIES}, naming
     * it (never its value).
     */
    static void requireKnownKeyProperties(Binder binder) {
        Map<String, Map<String, Object>> keys = binder.bind(SigningKeys.PREFIX + ".keys",
                Bindable.mapOf(String.class, Object.class)).orElse(Map.of()).entrySet().stream()
                .filter(e -> e.getValue() instanceof Map<?, ?>)
                .collect(Collectors.toMap(Map.Entry::getKey, e -> castMap(e.getValue())));
        for (Map.Entry<String, Map<String, Object>> key : keys.entrySet()) {
            for (String name : key.getValue().keySet()) {
                String canonical = name.replaceAll("([a-z])([A-Z])", "$1-$2").replace('_', '-')
                        .toLowerCase(Locale.ROOT);
                if (!KEY_PROPERTIES.contains(canonical)) {
                    throw new FencingConfigurationException(SigningKeys.property(key.getKey(), name)
                            + " is not a property of a signing key (expected one of secret, public-key, private-key, "
                            + "retired): a misspelt property is ignored silently otherwise, e.g. a retired key that "
                            + "still verifies");
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> castMap(Object map) {
        return (Map<String, Object>) map;
    }

    @Bean
    @ConditionalOnMissingBean(TokenSigner.class)
    @Conditional(SignerConfigured.class)
    TokenSigner fencingTokenSigner(FencingProperties properties) {
        return SigningKeys.signer(properties.getSigning());
    }

    /**
     * {@code fencing.signing.keys}, {@code .scheme} or {@code .current-key-id} is set: then the verifier is built, and
     * what is missing fails startup (a current key id alone, its keys in a profile not active, turned nothing on).
     */
    static final class SigningConfigured extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return configured(context.getEnvironment())
                    ? ConditionOutcome.match(SigningKeys.PREFIX + " is configured")
                    : ConditionOutcome.noMatch(SigningKeys.PREFIX + ".keys is not set: tokens are not signed");
        }

        /** Keys or a scheme are set: tokens are signed or verified. */
        static boolean configured(Environment environment) {
            Binder binder = Binder.get(environment);
            return !binder.bind(SigningKeys.PREFIX + ".keys", Bindable.mapOf(String.class, Object.class))
                    .orElse(Map.of()).isEmpty() || binder.bind(SigningKeys.PREFIX + ".scheme", String.class).isBound()
                    || binder.bind(SigningKeys.PREFIX + ".current-key-id", String.class).isBound();
        }
    }

    /** {@code fencing.signing.current-key-id} names a key whose secret or private-key is set here. */
    static final class SignerConfigured extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            String id = Binder.get(context.getEnvironment()).bind(SigningKeys.PREFIX + ".current-key-id", String.class)
                    .orElse(null);
            if (id == null || id.isBlank()) {
                return ConditionOutcome.noMatch(SigningKeys.PREFIX + ".current-key-id is not set: verifies only");
            }
            return signs(context.getEnvironment())
                    ? ConditionOutcome.match("key '" + id + "' has signing material")
                    : ConditionOutcome.noMatch("key '" + id + "' has no secret or private-key here: verifies only");
        }

        /** The current key is set and has a secret or private key here: this application signs. */
        static boolean signs(Environment environment) {
            Binder binder = Binder.get(environment);
            String id = binder.bind(SigningKeys.PREFIX + ".current-key-id", String.class).orElse(null);
            return id != null && !id.isBlank()
                    && (binder.bind(SigningKeys.property(id, "secret"), String.class).isBound()
                    || binder.bind(SigningKeys.property(id, "private-key"), String.class).isBound());
        }
    }
}
