package dev.fencing.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a method (or, on a type, each of its public instance methods) as a write to a fenced resource:
 * the call runs only if the fencing token bound to the current thread for that resource passes the rule below,
 * and the check and the method body are atomic per effective resource.
 *
 * <p>The rule, against {@code max_seen}, the highest token the resource has accepted:
 * <ul>
 *   <li>token &gt; max_seen: accepted, max_seen becomes the token (and its holder is remembered);</li>
 *   <li>token = max_seen from the same holder: accepted (one lease carries its token on every operation);</li>
 *   <li>token = max_seen from another holder: rejected (two clients with one token never both write);</li>
 *   <li>token &lt; max_seen: rejected as stale;</li>
 *   <li>no token bound for the resource: rejected. A missing token is never replaced by a fresh one.</li>
 * </ul>
 *
 * <p>Found on the method, its class, and the interfaces and superclasses they extend, as Spring finds
 * {@code @Transactional}, also on an interface of the class for a method a superclass implements; a method-level
 * annotation wins over a type-level one, and one declared on a subtype over its supertypes' (the class's own method
 * over its interface's). Declarations that disagree with none of them overriding the others (the same method fenced
 * on two interfaces with two resources, or on an interface and on an unrelated superclass; the same key text naming
 * different parameters) are a startup error, not settled by the order of {@code implements}. A type-level
 * annotation on an interface speaks for the methods that interface has, when another type's disagrees. Under
 * AspectJ weaving only an
 * annotation on the executing method or on the class declaring it is visible: one found on an interface, an
 * overridden method or another supertype must be repeated on the implementation (Spring's
 * {@code @EnableFencing(mode = ASPECTJ)} refuses to start otherwise). A method returning a {@code Mono}, a
 * {@code Flux} or another reactive type is fenced when it is subscribed, with the token from the Reactor Context; one
 * returning a future must also be Spring's {@code @Async}, and is fenced on the executor until that future completes;
 * any other asynchronous result (its write would happen after the check) is a startup error.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Fenced {

    /**
     * The lock name: tokens are issued for it and checked against it. Required; blank, or longer than 256
     * characters, is a startup error.
     *
     * @return the resource name, also the {@code resource} tag of the {@code fencing.checks} counter
     */
    String resource();

    /**
     * Optional SpEL expression over the method's arguments ({@code "#accountId"}, {@code "#order.customerId"},
     * or by position {@code "#p0"}) narrowing the fence to one entity: the effective resource becomes
     * {@code resource + ":" + key}, at most 256 characters. Parsed once per method; an expression that does not
     * parse, names an unknown parameter, or uses types, constructors, beans or assignment is a startup error. The
     * value must have a stable text (strings, numbers, UUIDs, enums, {@code java.time} values, records, types that
     * override {@code toString()}, or a {@link FencingKey}); a {@code null}, blank or identity-text value (an array,
     * a collection, an entity without {@code toString()}) rejects the call, and so does a key that makes the
     * effective resource longer than 256 characters.
     *
     * @return the key expression, empty for the whole resource
     */
    String key() default "";

    /**
     * Whether this method opens the critical section (client side). When {@code true} and no token is bound for
     * the effective resource, a lease is acquired from the configured token issuer, its token bound for the
     * duration of the call and the lease released afterwards (for a reactive method: acquired on subscription, its
     * token in the Reactor Context, released on complete, error or cancel); when one is bound it is propagated
     * unchanged.
     * The token is checked by the {@code @Fenced} methods the call reaches (resource side), not here.
     * When {@code false} (the default, for repository methods) the method never acquires: it checks.
     *
     * @return {@code true} to acquire when no token is bound
     */
    boolean acquire() default false;

    /**
     * For an acquiring method: whether its lock is reported when no {@code @Fenced} check presented the lock's token
     * while it was held, and no carrier sent it to another service (counted in {@code fencing.leases.unchecked},
     * logged at WARNING once per method): what the call wrote was then not fenced. Set {@code false} on a method
     * that takes the lock only to read, or that writes on some of its paths only. {@code false} on a method that
     * does not acquire is a startup error.
     *
     * @return {@code false} to take the lock without reporting it when no check used its token
     */
    boolean reportUnchecked() default true;
}
