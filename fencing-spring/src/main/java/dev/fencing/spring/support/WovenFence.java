package dev.fencing.spring.support;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Not for application code: the mark FencingAspect leaves, by {@code declare @method}, on each method it weaves a fence
 * into (the method itself carries {@code @Fenced}, or it is a public method of a class that does), under compile-time
 * and load-time weaving alike, inlined advice or not. The ASPECTJ startup check reads it per method: a body moved into
 * {@code name_aroundBodyN} proves only that some aspect wove the method (a woven {@code @Transactional} does that too),
 * this proves FencingAspect did.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface WovenFence {
}
