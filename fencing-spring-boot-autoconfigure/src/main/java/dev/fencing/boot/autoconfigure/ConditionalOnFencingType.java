package dev.fencing.boot.autoconfigure;

import org.springframework.context.annotation.Conditional;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Matches when {@code fencing.store.type} or {@code fencing.issuer.type} binds to the given value, as
 * {@link FencingProperties} binds it (relaxed: {@code in-memory}, {@code inmemory} and {@code IN_MEMORY} are one
 * value), so a condition never disagrees with the properties the application sees. Set exactly one attribute.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Documented
@Conditional(OnFencingTypeCondition.class)
@interface ConditionalOnFencingType {

    /** The store type to match; empty to match on the issuer. */
    FencingProperties.StoreType[] store() default {};

    /** The issuer type to match; empty to match on the store. */
    FencingProperties.IssuerType[] issuer() default {};
}
