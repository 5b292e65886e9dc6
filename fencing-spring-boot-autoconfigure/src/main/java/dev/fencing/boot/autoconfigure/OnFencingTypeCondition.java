package dev.fencing.boot.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

import java.util.Map;

/** {@link ConditionalOnFencingType}: binds the type property as {@link FencingProperties} does and compares. */
class OnFencingTypeCondition extends SpringBootCondition {

    static final String STORE_TYPE = "fencing.store.type";
    static final String ISSUER_TYPE = "fencing.issuer.type";

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        Map<String, Object> attributes = metadata.getAnnotationAttributes(ConditionalOnFencingType.class.getName());
        Enum<?>[] stores = (Enum<?>[]) attributes.get("store");
        Enum<?>[] issuers = (Enum<?>[]) attributes.get("issuer");
        boolean onStore = stores.length > 0;
        String property = onStore ? STORE_TYPE : ISSUER_TYPE;
        Enum<?> wanted = onStore ? stores[0] : issuers[0];
        Binder binder = Binder.get(context.getEnvironment());
        Enum<?> actual;
        try {
            actual = onStore
                    ? binder.bind(STORE_TYPE, FencingProperties.StoreType.class)
                            .orElse(FencingProperties.StoreType.JDBC)
                    : binder.bind(ISSUER_TYPE, FencingProperties.IssuerType.class)
                            .orElse(FencingProperties.IssuerType.NONE);
        } catch (BindException e) {
            // the properties' own binding fails startup with Boot's message naming the valid values
            return ConditionOutcome.noMatch(property + " does not bind: " + e.getMessage());
        }
        return actual == wanted ? ConditionOutcome.match(property + " is " + actual)
                : ConditionOutcome.noMatch(property + " is " + actual + ", not " + wanted);
    }
}
