package dev.fencing.aspectj;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.guard.FenceBracket;
import dev.fencing.guard.FenceGuard;
import dev.fencing.spring.support.FencingSupport;
import dev.fencing.spring.support.WovenFence;
import dev.fencing.store.BracketFenceStore;
import dev.fencing.token.FencingToken;
import org.aspectj.lang.JoinPoint;
import org.aspectj.lang.reflect.MethodSignature;
import org.springframework.util.ClassUtils;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The fence for AspectJ weaving (compile-time with ajc, load-time with {@code -javaagent:aspectjweaver.jar}; the
 * jar ships {@code META-INF/aop.xml} declaring it). A singleton aspect: configure it once with
 * {@link #configure(FencingSupport)} ({@code @EnableFencing(mode = ASPECTJ)} does), until then every fenced call is
 * refused. Weaving sees an annotation only where the woven code is: on the executing method itself, or on the class
 * that declares it. Annotations on interfaces (their methods or the interface type), on overridden methods and on
 * subclasses are invisible to it: repeat them on the implementation ({@code @EnableFencing(mode = ASPECTJ)} refuses
 * to start otherwise).
 *
 * <p>A code-style aspect, so that ajc inlines the advice that fences a method: with a store that fences a write its
 * caller runs ({@link BracketFenceStore}, the in-memory store), the check, the method's own body and the release run in
 * the woven method itself, and an unkeyed fenced call allocates nothing (no closure, no join point, no box for an
 * {@code int}, {@code long}, {@code float} or {@code double} result: each has a routing advice of its own). A keyed
 * method of no parameter has its key computed over a shared empty array; one of one to six parameters has its arguments
 * bound by the advice and handed to the bracket one by one: no join point, no array, no closure, only the boxes of
 * primitive arguments outside the small-value caches; one of seven to twelve has its first six and its last six
 * bound, so it needs no join point either (below twelve the two groups overlap, and a primitive argument bound twice is
 * boxed twice). Up to twelve parameters a primitive result is not boxed either: each count has a routing advice per
 * return type. One of more than twelve takes its arguments from AspectJ's join point (built per call, its argument
 * array copied by {@code getArgs()}). Every other fence (an acquiring, future or reactive method, a database store, observed checks,
 * a resource in observe mode, asked of the cached bracket on every call) runs through {@link FencingSupport#invoke} as
 * a callback. Method-level and type-level {@code @Fenced}, keyed and unkeyed, are split by pointcuts that can never
 * both match one join point, so the fence runs once per call; a woven transaction aspect (spring-aspects) runs outside
 * this one, so the check joins its transaction, and a woven {@code @Async} aspect runs outside both, so the check of an
 * {@code @Async} method runs on the executor, where its write does.
 */
public aspect FencingAspect {

    declare precedence: org.springframework.scheduling.aspectj.*, org.springframework.transaction.aspectj.*,
            dev.fencing.aspectj.FencingAspect;

    /** The route of a join point that is not fenced (a type-level {@code @Fenced} does not apply to it). */
    private static final Object PLAIN = new Object();

    /** The route of a join point fenced through {@link FencingSupport#invoke}. */
    private static final Object CALLBACK = new Object();

    /**
     * The join point whose callback fence the advice below the routing one must run: set by the routing advice just
     * before its {@code proceed()}, taken by that advice's test at once. Never left set after a call.
     */
    private static final ThreadLocal<JoinPoint.StaticPart> CALLBACK_PENDING = new ThreadLocal<>();

    /** Whether any join point ever took the callback route: until then the test of the callback advice reads this. */
    private static volatile boolean callbacks;

    /** What an unkeyed point asks for its arguments: none, so asking means the weaving split failed; fail closed. */
    private static final Function<Object, Object[]> NO_ARGUMENTS = unused -> {
        throw new FencingConfigurationException("A @Fenced method with a key was woven by the advice for methods "
                + "without one (the annotation weaving saw has no key, the one the fence resolved has): its arguments "
                + "are not available there, so the call is refused; put @Fenced with its key on the method itself");
    };

    /** The arguments of a method with no parameter; never written (the fence only reads a call's arguments). */
    private static final Object[] NONE = new Object[0];

    /** What a keyed callback asks for its arguments: the array it was given. */
    private static final Function<Object[], Object[]> ARGUMENTS = args -> args;

    private volatile Routes routes;

    /** For AspectJ's singleton instantiation; use {@code FencingAspect.aspectOf()} (woven code) to reach it. */
    public FencingAspect() {
    }

    /** The support a live application context bound ({@link #bind}), until it detaches; {@code null}: none. */
    private FencingSupport boundByContext;

    /**
     * Connects the woven aspect to its store, issuer and counters, without checking the woven classes. May be called
     * again to replace them. By hand, without a Spring context, prefer {@link #configure(FencingSupport, String...)}:
     * weaving cannot see some annotations (an override that does not repeat {@code @Fenced}, one on an interface), and
     * those methods run unfenced unless a startup check finds them.
     */
    public synchronized void configure(FencingSupport support) {
        this.routes = new Routes(Objects.requireNonNull(support, "support"));
        this.boundByContext = null;
    }

    /**
     * {@link #configure(FencingSupport)} after the startup check of the woven classes under {@code packages}
     * ({@link FencingSupport#verifyWovenClasses}: every {@code @Fenced} method there woven, its annotation visible to
     * weaving, its fence buildable, no resource fenced both with and without a key); what an application without a
     * Spring context calls once at startup.
     *
     * @throws dev.fencing.FencingConfigurationException listing every problem; the aspect is then left
     *                                                   unconfigured, a configuration made before included: every
     *                                                   fenced call refused
     */
    public synchronized void configure(FencingSupport support, String... packages) {
        Objects.requireNonNull(support, "support");
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        try {
            support.verifyWovenClasses(loader != null ? loader : FencingAspect.class.getClassLoader(),
                    Arrays.asList(packages));
        } catch (RuntimeException e) {
            routes = null; // also a configuration made before: fail closed, every fenced call refused
            boundByContext = null;
            throw e;
        }
        configure(support);
    }

    /**
     * {@link #configure(FencingSupport)} for an application context that owns the aspect while it lives (what
     * {@code @EnableFencing(mode = ASPECTJ)} calls). Refused while another live context's support is bound: the woven
     * aspect is one per class loader, so a second live context would take over the first one's fenced calls (its
     * store, its modes, its counters) and leave them refused when it closes. A support given to {@link #configure}
     * by hand is replaced, as before.
     *
     * @throws dev.fencing.FencingConfigurationException when another context's support is bound and not detached
     */
    public synchronized void bind(FencingSupport support) {
        if (boundByContext != null && boundByContext != support) {
            throw new dev.fencing.FencingConfigurationException("FencingAspect is already bound to another "
                    + "application context's fencing in this JVM: the woven aspect is one per class loader, so two "
                    + "live contexts in ASPECTJ mode would fence each other's calls with the wrong store and modes. "
                    + "Close the other context first (in Spring tests: @DirtiesContext on the test class that "
                    + "started it, or one ASPECTJ configuration for the test suite)");
        }
        configure(support);
        boundByContext = support;
    }

    /** Whether {@link #configure(FencingSupport)} was called. */
    public boolean isConfigured() {
        return routes != null;
    }

    /**
     * Detaches {@code expected} if it is still the configured support (context shutdown): fenced calls are refused
     * until configured again. Another context's configuration is left alone.
     */
    public synchronized void detach(FencingSupport expected) {
        Routes current = routes;
        if (current != null && current.support == expected) {
            routes = null;
        }
        if (boundByContext == expected) {
            boundByContext = null;
        }
    }

    /** A method carrying {@code @Fenced}. */
    pointcut fencedMethod(): execution(@Fenced !static * *(..));

    /**
     * A static method carrying {@code @Fenced}: a fence point is an instance method (as on a proxy), so weaving
     * refuses every call of it rather than run it unfenced, and ajc says so where it weaves.
     */
    pointcut fencedStatic(): execution(@Fenced static * *(..));

    declare warning: fencedStatic(): "@Fenced applies to instance methods only: every call of this static method is "
            + "refused (FencingConfigurationException); make it an instance method";

    /** A public method of a class carrying {@code @Fenced}, where the method itself does not. */
    pointcut fencedType(): @within(Fenced) && execution(public !static * *(..)) && !execution(@Fenced * *(..));

    /*
     * The mark the startup check reads (WovenClassCheck.isWoven): each method these advices fence carries WovenFence
     * once woven, so a method woven by another aspect only (a woven @Transactional moves its body into
     * name_aroundBodyN too) is not taken for a fenced one. The patterns are those of fencedMethod() and fencedType().
     */

    declare @method: @Fenced !static !abstract * *(..): @WovenFence;

    declare @method: !@Fenced public !static !abstract * (@Fenced *).*(..): @WovenFence;

    /**
     * The declaring class's {@code @Fenced} has no key: {@code within} alone is lexical (it would see an enclosing
     * class's annotation), the declaring type of the signature alone would see a superclass's; both must agree.
     */
    pointcut unkeyedType(): within(@Fenced(key = "") *) && execution(* (@Fenced(key = "") *).*(..));

    /** A fenced method whose {@code @Fenced} has no key: its arguments are never needed. */
    pointcut unkeyed(): (fencedMethod() && execution(@Fenced(key = "") * *(..))) || (fencedType() && unkeyedType());

    /** Every other fenced method: the complement of {@code unkeyed()}, so exactly one of them matches a join point. */
    pointcut keyed(): (fencedMethod() && !execution(@Fenced(key = "") * *(..))) || (fencedType() && !unkeyedType());

    /*
     * The keyed methods by their number of parameters, which execution() tells from the signature alone: those of one
     * to six bind them (args() of Object matches any declared type, boxes a primitive and binds null as it is), those
     * of none are argument-free (below, with the unkeyed ones), every other one (more than six) is keyedMore() or
     * keyedBeyond(). Exactly one of these matches a keyed join point.
     */

    pointcut keyed1(Object a0): keyed() && execution(* *(*)) && args(a0);

    pointcut keyed2(Object a0, Object a1): keyed() && execution(* *(*, *)) && args(a0, a1);

    pointcut keyed3(Object a0, Object a1, Object a2): keyed() && execution(* *(*, *, *)) && args(a0, a1, a2);

    pointcut keyed4(Object a0, Object a1, Object a2, Object a3): keyed() && execution(* *(*, *, *, *))
            && args(a0, a1, a2, a3);

    pointcut keyed5(Object a0, Object a1, Object a2, Object a3, Object a4): keyed() && execution(* *(*, *, *, *, *))
            && args(a0, a1, a2, a3, a4);

    pointcut keyed6(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5): keyed()
            && execution(* *(*, *, *, *, *, *)) && args(a0, a1, a2, a3, a4, a5);

    /*
     * Seven to twelve parameters: the first six bound as for six and the last six too (an args() ending in '..' and
     * one starting with it; a parameter bound twice is passed on with the value it had), so every argument is at hand
     * without a join point: a key over one of the first six reads it alone, any other key gets the call's arguments
     * as one array. A method of more than twelve is keyedBeyond() and takes them from AspectJ's join point (144 B or
     * more per call).
     */

    pointcut keyedMore(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5,
            Object b0, Object b1, Object b2, Object b3, Object b4, Object b5):
            keyed() && execution(* *(*, *, *, *, *, *, *, ..))
            && !execution(* *(*, *, *, *, *, *, *, *, *, *, *, *, *, ..))
            && args(a0, a1, a2, a3, a4, a5, ..) && args(.., b0, b1, b2, b3, b4, b5);

    pointcut keyedBeyond(): keyed() && execution(* *(*, *, *, *, *, *, *, *, *, *, *, *, *, ..));

    /** A method of no parameter: its arguments are an empty array, which the advice has without a join point. */
    pointcut noParameters(): execution(* *());

    /** A fenced call whose arguments the fence never reads (unkeyed) or knows without binding any (none). */
    pointcut argumentFree(): unkeyed() || (keyed() && noParameters());

    /** A method returning anything but {@code int}, {@code long}, {@code float} or {@code double}. */
    pointcut returnsOther(): !execution(int *(..)) && !execution(long *(..)) && !execution(float *(..))
            && !execution(double *(..));

    /*
     * The routing advice of an argument-free call (unkeyed, or of a method with no parameter), one per return type
     * that would be boxed (an Object-returning advice boxes a primitive result, and Long.valueOf & co. are not
     * scalar-replaced): a bracket fence runs here around the inlined proceed(); a callback fence is left to the advice
     * after these (which alone builds a closure); a join point that is not fenced runs straight through. They refer to
     * nothing but thisJoinPointStaticPart, so ajc builds no join point for them, and their return types split the
     * argument-free join points among them without overlap (the Object one takes a reference, void, or a primitive
     * whose boxes are cached or rare).
     *
     * These advices and the keyed ones below are written by RoutingAdvices (fencing-aspect's tests), one per group and
     * return type from one template: change that, then run RoutingAdvicesTest with -Dfencing.aspect.update=true.
     */

    // <routing-advices argument-free>
    int around(): argumentFree() && execution(int *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, false);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(NONE);
            BracketFenceStore.Entry entry = bracket.enter(token);
            int result;
            try {
                result = proceed();
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed();
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed();
        } finally {
            unpend(previous);
        }
    }

    long around(): argumentFree() && execution(long *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, false);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(NONE);
            BracketFenceStore.Entry entry = bracket.enter(token);
            long result;
            try {
                result = proceed();
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed();
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed();
        } finally {
            unpend(previous);
        }
    }

    float around(): argumentFree() && execution(float *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, false);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(NONE);
            BracketFenceStore.Entry entry = bracket.enter(token);
            float result;
            try {
                result = proceed();
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed();
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed();
        } finally {
            unpend(previous);
        }
    }

    double around(): argumentFree() && execution(double *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, false);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(NONE);
            BracketFenceStore.Entry entry = bracket.enter(token);
            double result;
            try {
                result = proceed();
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed();
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed();
        } finally {
            unpend(previous);
        }
    }

    Object around(): argumentFree() && returnsOther() {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, false);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(NONE);
            BracketFenceStore.Entry entry = bracket.enter(token);
            Object result;
            try {
                result = proceed();
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed();
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed();
        } finally {
            unpend(previous);
        }
    }
    // </routing-advices argument-free>

    /** The callback fence of a call of no parameter, keyed or not, the advice above routed here: no arguments. */
    Object around(): argumentFree() && noParameters() && if(callbackPending(thisJoinPointStaticPart)) {
        return keyedCallback(thisJoinPointStaticPart, NONE, new Body<Object[]>() {
            @Override
            Object run() throws Throwable {
                return proceed();
            }
        });
    }

    /** The callback fence of an unkeyed call of one parameter or more the advice above routed here. */
    Object around(): unkeyed() && !noParameters() && if(callbackPending(thisJoinPointStaticPart)) {
        CALLBACK_PENDING.remove();
        Method method = methodOf(thisJoinPointStaticPart);
        FencingSupport current = supportFor(method);
        try {
            return current.invoke(method, method.getDeclaringClass(), null, NO_ARGUMENTS, new Body<Object>() {
                @Override
                Object run() throws Throwable {
                    return proceed();
                }
            });
        } catch (Throwable t) {
            throw FencingAspect.<RuntimeException>rethrow(t);
        }
    }

    /*
     * The routing advice of a keyed call, as the unkeyed one above: one per return type for each of one to six
     * parameters and seven to twelve, so a primitive result is never boxed, and one returning an Object for more than
     * twelve. Those of up to twelve bind the arguments (a primitive boxed) and pass them to the bracket one by one, so
     * no join point is built and, when the key reads one of the first six arguments, no array; a method of more than
     * twelve takes its arguments from the join point (ajc builds one for it, 144 B or more, next to which a boxed
     * result is small). The parameter counts and the return types split the keyed join points among these advices
     * without overlap; a callback fence is left to the keyed advices after these.
     */

    // <routing-advices keyed>
    int around(Object a0): keyed1(a0) && execution(int *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(1, a0, null, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            int result;
            try {
                result = proceed(a0);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0);
        } finally {
            unpend(previous);
        }
    }

    long around(Object a0): keyed1(a0) && execution(long *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(1, a0, null, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            long result;
            try {
                result = proceed(a0);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0);
        } finally {
            unpend(previous);
        }
    }

    float around(Object a0): keyed1(a0) && execution(float *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(1, a0, null, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            float result;
            try {
                result = proceed(a0);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0);
        } finally {
            unpend(previous);
        }
    }

    double around(Object a0): keyed1(a0) && execution(double *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(1, a0, null, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            double result;
            try {
                result = proceed(a0);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0);
        } finally {
            unpend(previous);
        }
    }

    Object around(Object a0): keyed1(a0) && returnsOther() {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(1, a0, null, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            Object result;
            try {
                result = proceed(a0);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0);
        } finally {
            unpend(previous);
        }
    }

    int around(Object a0, Object a1): keyed2(a0, a1) && execution(int *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(2, a0, a1, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            int result;
            try {
                result = proceed(a0, a1);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1);
        } finally {
            unpend(previous);
        }
    }

    long around(Object a0, Object a1): keyed2(a0, a1) && execution(long *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(2, a0, a1, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            long result;
            try {
                result = proceed(a0, a1);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1);
        } finally {
            unpend(previous);
        }
    }

    float around(Object a0, Object a1): keyed2(a0, a1) && execution(float *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(2, a0, a1, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            float result;
            try {
                result = proceed(a0, a1);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1);
        } finally {
            unpend(previous);
        }
    }

    double around(Object a0, Object a1): keyed2(a0, a1) && execution(double *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(2, a0, a1, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            double result;
            try {
                result = proceed(a0, a1);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1);
        } finally {
            unpend(previous);
        }
    }

    Object around(Object a0, Object a1): keyed2(a0, a1) && returnsOther() {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(2, a0, a1, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            Object result;
            try {
                result = proceed(a0, a1);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1);
        } finally {
            unpend(previous);
        }
    }

    int around(Object a0, Object a1, Object a2): keyed3(a0, a1, a2) && execution(int *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(3, a0, a1, a2);
            BracketFenceStore.Entry entry = bracket.enter(token);
            int result;
            try {
                result = proceed(a0, a1, a2);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2);
        } finally {
            unpend(previous);
        }
    }

    long around(Object a0, Object a1, Object a2): keyed3(a0, a1, a2) && execution(long *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(3, a0, a1, a2);
            BracketFenceStore.Entry entry = bracket.enter(token);
            long result;
            try {
                result = proceed(a0, a1, a2);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2);
        } finally {
            unpend(previous);
        }
    }

    float around(Object a0, Object a1, Object a2): keyed3(a0, a1, a2) && execution(float *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(3, a0, a1, a2);
            BracketFenceStore.Entry entry = bracket.enter(token);
            float result;
            try {
                result = proceed(a0, a1, a2);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2);
        } finally {
            unpend(previous);
        }
    }

    double around(Object a0, Object a1, Object a2): keyed3(a0, a1, a2) && execution(double *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(3, a0, a1, a2);
            BracketFenceStore.Entry entry = bracket.enter(token);
            double result;
            try {
                result = proceed(a0, a1, a2);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2);
        } finally {
            unpend(previous);
        }
    }

    Object around(Object a0, Object a1, Object a2): keyed3(a0, a1, a2) && returnsOther() {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(3, a0, a1, a2);
            BracketFenceStore.Entry entry = bracket.enter(token);
            Object result;
            try {
                result = proceed(a0, a1, a2);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2);
        } finally {
            unpend(previous);
        }
    }

    int around(Object a0, Object a1, Object a2, Object a3): keyed4(a0, a1, a2, a3) && execution(int *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(4, a0, a1, a2, a3, null, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            int result;
            try {
                result = proceed(a0, a1, a2, a3);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3);
        } finally {
            unpend(previous);
        }
    }

    long around(Object a0, Object a1, Object a2, Object a3): keyed4(a0, a1, a2, a3) && execution(long *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(4, a0, a1, a2, a3, null, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            long result;
            try {
                result = proceed(a0, a1, a2, a3);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3);
        } finally {
            unpend(previous);
        }
    }

    float around(Object a0, Object a1, Object a2, Object a3): keyed4(a0, a1, a2, a3) && execution(float *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(4, a0, a1, a2, a3, null, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            float result;
            try {
                result = proceed(a0, a1, a2, a3);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3);
        } finally {
            unpend(previous);
        }
    }

    double around(Object a0, Object a1, Object a2, Object a3): keyed4(a0, a1, a2, a3) && execution(double *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(4, a0, a1, a2, a3, null, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            double result;
            try {
                result = proceed(a0, a1, a2, a3);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3);
        } finally {
            unpend(previous);
        }
    }

    Object around(Object a0, Object a1, Object a2, Object a3): keyed4(a0, a1, a2, a3) && returnsOther() {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(4, a0, a1, a2, a3, null, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            Object result;
            try {
                result = proceed(a0, a1, a2, a3);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3);
        } finally {
            unpend(previous);
        }
    }

    int around(Object a0, Object a1, Object a2, Object a3, Object a4):
            keyed5(a0, a1, a2, a3, a4) && execution(int *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(5, a0, a1, a2, a3, a4, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            int result;
            try {
                result = proceed(a0, a1, a2, a3, a4);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4);
        } finally {
            unpend(previous);
        }
    }

    long around(Object a0, Object a1, Object a2, Object a3, Object a4):
            keyed5(a0, a1, a2, a3, a4) && execution(long *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(5, a0, a1, a2, a3, a4, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            long result;
            try {
                result = proceed(a0, a1, a2, a3, a4);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4);
        } finally {
            unpend(previous);
        }
    }

    float around(Object a0, Object a1, Object a2, Object a3, Object a4):
            keyed5(a0, a1, a2, a3, a4) && execution(float *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(5, a0, a1, a2, a3, a4, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            float result;
            try {
                result = proceed(a0, a1, a2, a3, a4);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4);
        } finally {
            unpend(previous);
        }
    }

    double around(Object a0, Object a1, Object a2, Object a3, Object a4):
            keyed5(a0, a1, a2, a3, a4) && execution(double *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(5, a0, a1, a2, a3, a4, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            double result;
            try {
                result = proceed(a0, a1, a2, a3, a4);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4);
        } finally {
            unpend(previous);
        }
    }

    Object around(Object a0, Object a1, Object a2, Object a3, Object a4): keyed5(a0, a1, a2, a3, a4) && returnsOther() {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(5, a0, a1, a2, a3, a4, null);
            BracketFenceStore.Entry entry = bracket.enter(token);
            Object result;
            try {
                result = proceed(a0, a1, a2, a3, a4);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4);
        } finally {
            unpend(previous);
        }
    }

    int around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5):
            keyed6(a0, a1, a2, a3, a4, a5) && execution(int *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(6, a0, a1, a2, a3, a4, a5);
            BracketFenceStore.Entry entry = bracket.enter(token);
            int result;
            try {
                result = proceed(a0, a1, a2, a3, a4, a5);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4, a5);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4, a5);
        } finally {
            unpend(previous);
        }
    }

    long around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5):
            keyed6(a0, a1, a2, a3, a4, a5) && execution(long *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(6, a0, a1, a2, a3, a4, a5);
            BracketFenceStore.Entry entry = bracket.enter(token);
            long result;
            try {
                result = proceed(a0, a1, a2, a3, a4, a5);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4, a5);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4, a5);
        } finally {
            unpend(previous);
        }
    }

    float around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5):
            keyed6(a0, a1, a2, a3, a4, a5) && execution(float *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(6, a0, a1, a2, a3, a4, a5);
            BracketFenceStore.Entry entry = bracket.enter(token);
            float result;
            try {
                result = proceed(a0, a1, a2, a3, a4, a5);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4, a5);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4, a5);
        } finally {
            unpend(previous);
        }
    }

    double around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5):
            keyed6(a0, a1, a2, a3, a4, a5) && execution(double *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(6, a0, a1, a2, a3, a4, a5);
            BracketFenceStore.Entry entry = bracket.enter(token);
            double result;
            try {
                result = proceed(a0, a1, a2, a3, a4, a5);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4, a5);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4, a5);
        } finally {
            unpend(previous);
        }
    }

    Object around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5):
            keyed6(a0, a1, a2, a3, a4, a5) && returnsOther() {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(6, a0, a1, a2, a3, a4, a5);
            BracketFenceStore.Entry entry = bracket.enter(token);
            Object result;
            try {
                result = proceed(a0, a1, a2, a3, a4, a5);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4, a5);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4, a5);
        } finally {
            unpend(previous);
        }
    }

    int around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5,
            Object b0, Object b1, Object b2, Object b3, Object b4, Object b5):
            keyedMore(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5) && execution(int *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            int key = bracket.point().keyArgument();
            FencingToken token = key >= 0 && key < 6 ? bracket.token(6, a0, a1, a2, a3, a4, a5)
                    : bracket.token(arguments(at, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5));
            BracketFenceStore.Entry entry = bracket.enter(token);
            int result;
            try {
                result = proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
        } finally {
            unpend(previous);
        }
    }

    long around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5,
            Object b0, Object b1, Object b2, Object b3, Object b4, Object b5):
            keyedMore(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5) && execution(long *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            int key = bracket.point().keyArgument();
            FencingToken token = key >= 0 && key < 6 ? bracket.token(6, a0, a1, a2, a3, a4, a5)
                    : bracket.token(arguments(at, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5));
            BracketFenceStore.Entry entry = bracket.enter(token);
            long result;
            try {
                result = proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
        } finally {
            unpend(previous);
        }
    }

    float around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5,
            Object b0, Object b1, Object b2, Object b3, Object b4, Object b5):
            keyedMore(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5) && execution(float *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            int key = bracket.point().keyArgument();
            FencingToken token = key >= 0 && key < 6 ? bracket.token(6, a0, a1, a2, a3, a4, a5)
                    : bracket.token(arguments(at, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5));
            BracketFenceStore.Entry entry = bracket.enter(token);
            float result;
            try {
                result = proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
        } finally {
            unpend(previous);
        }
    }

    double around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5,
            Object b0, Object b1, Object b2, Object b3, Object b4, Object b5):
            keyedMore(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5) && execution(double *(..)) {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            int key = bracket.point().keyArgument();
            FencingToken token = key >= 0 && key < 6 ? bracket.token(6, a0, a1, a2, a3, a4, a5)
                    : bracket.token(arguments(at, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5));
            BracketFenceStore.Entry entry = bracket.enter(token);
            double result;
            try {
                result = proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
        } finally {
            unpend(previous);
        }
    }

    Object around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5,
            Object b0, Object b1, Object b2, Object b3, Object b4, Object b5):
            keyedMore(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5) && returnsOther() {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            int key = bracket.point().keyArgument();
            FencingToken token = key >= 0 && key < 6 ? bracket.token(6, a0, a1, a2, a3, a4, a5)
                    : bracket.token(arguments(at, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5));
            BracketFenceStore.Entry entry = bracket.enter(token);
            Object result;
            try {
                result = proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
        } finally {
            unpend(previous);
        }
    }
    // </routing-advices keyed>

    Object around(): keyedBeyond() {
        JoinPoint.StaticPart at = thisJoinPointStaticPart;
        Object route = route(at, true);
        if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {
            FenceBracket bracket = (FenceBracket) route;
            FencingToken token = bracket.token(thisJoinPoint.getArgs());
            BracketFenceStore.Entry entry = bracket.enter(token);
            Object result;
            try {
                result = proceed();
            } catch (Throwable t) {
                throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));
            }
            bracket.exit(entry);
            return result;
        }
        if (route == PLAIN) {
            return proceed();
        }
        // the callback fence: a bracket's resource in observe mode, or a point only the guard can fence
        JoinPoint.StaticPart previous = pend(at);
        try {
            return proceed();
        } finally {
            unpend(previous);
        }
    }

    /**
     * The arguments of a call of seven to twelve parameters at {@code at}, from its first six and its last six (which
     * overlap below twelve): what a key that does not read one of the first six alone (a later argument, or several)
     * is given.
     */
    private static Object[] arguments(JoinPoint.StaticPart at, Object a0, Object a1, Object a2, Object a3,
            Object a4, Object a5, Object b0, Object b1, Object b2, Object b3, Object b4, Object b5) {
        int count = ((MethodSignature) at.getSignature()).getParameterTypes().length;
        Object[] args = new Object[count];
        args[0] = a0;
        args[1] = a1;
        args[2] = a2;
        args[3] = a3;
        args[4] = a4;
        args[5] = a5;
        for (int i = 6; i < count; i++) {
            int last = i - count + 6;
            args[i] = last == 0 ? b0 : last == 1 ? b1 : last == 2 ? b2 : last == 3 ? b3 : last == 4 ? b4 : b5;
        }
        return args;
    }

    /*
     * The callback fence of a keyed call the advices above routed here, one per group: the bound arguments, or the
     * join point's, go to the guard as the call's argument array.
     */

    Object around(Object a0): keyed1(a0) && if(callbackPending(thisJoinPointStaticPart)) {
        return keyedCallback(thisJoinPointStaticPart, new Object[] {a0}, new Body<Object[]>() {
            @Override
            Object run() throws Throwable {
                return proceed(a0);
            }
        });
    }

    Object around(Object a0, Object a1): keyed2(a0, a1) && if(callbackPending(thisJoinPointStaticPart)) {
        return keyedCallback(thisJoinPointStaticPart, new Object[] {a0, a1}, new Body<Object[]>() {
            @Override
            Object run() throws Throwable {
                return proceed(a0, a1);
            }
        });
    }

    Object around(Object a0, Object a1, Object a2): keyed3(a0, a1, a2) && if(callbackPending(thisJoinPointStaticPart)) {
        return keyedCallback(thisJoinPointStaticPart, new Object[] {a0, a1, a2}, new Body<Object[]>() {
            @Override
            Object run() throws Throwable {
                return proceed(a0, a1, a2);
            }
        });
    }

    Object around(Object a0, Object a1, Object a2, Object a3): keyed4(a0, a1, a2, a3)
            && if(callbackPending(thisJoinPointStaticPart)) {
        return keyedCallback(thisJoinPointStaticPart, new Object[] {a0, a1, a2, a3}, new Body<Object[]>() {
            @Override
            Object run() throws Throwable {
                return proceed(a0, a1, a2, a3);
            }
        });
    }

    Object around(Object a0, Object a1, Object a2, Object a3, Object a4): keyed5(a0, a1, a2, a3, a4)
            && if(callbackPending(thisJoinPointStaticPart)) {
        return keyedCallback(thisJoinPointStaticPart, new Object[] {a0, a1, a2, a3, a4}, new Body<Object[]>() {
            @Override
            Object run() throws Throwable {
                return proceed(a0, a1, a2, a3, a4);
            }
        });
    }

    Object around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5): keyed6(a0, a1, a2, a3, a4, a5)
            && if(callbackPending(thisJoinPointStaticPart)) {
        return keyedCallback(thisJoinPointStaticPart, new Object[] {a0, a1, a2, a3, a4, a5}, new Body<Object[]>() {
            @Override
            Object run() throws Throwable {
                return proceed(a0, a1, a2, a3, a4, a5);
            }
        });
    }

    Object around(Object a0, Object a1, Object a2, Object a3, Object a4, Object a5,
            Object b0, Object b1, Object b2, Object b3, Object b4, Object b5):
            keyedMore(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5) && if(callbackPending(thisJoinPointStaticPart)) {
        Object[] args = arguments(thisJoinPointStaticPart, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
        return keyedCallback(thisJoinPointStaticPart, args, new Body<Object[]>() {
            @Override
            Object run() throws Throwable {
                return proceed(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5);
            }
        });
    }

    Object around(): keyedBeyond() && if(callbackPending(thisJoinPointStaticPart)) {
        return keyedCallback(thisJoinPointStaticPart, thisJoinPoint.getArgs(), new Body<Object[]>() {
            @Override
            Object run() throws Throwable {
                return proceed();
            }
        });
    }


    /** The callback fence of the keyed call at {@code at} with these arguments, its body {@code body}. */
    private Object keyedCallback(JoinPoint.StaticPart at, Object[] args, Body<Object[]> body) {
        CALLBACK_PENDING.remove();
        Method method = methodOf(at);
        FencingSupport current = supportFor(method);
        try {
            return current.invoke(method, method.getDeclaringClass(), args, ARGUMENTS, body);
        } catch (Throwable t) {
            throw FencingAspect.<RuntimeException>rethrow(t);
        }
    }

    /** Refuses every call of a static {@code @Fenced} method: it would otherwise run unfenced. */
    Object around(): fencedStatic() {
        throw new FencingConfigurationException("@Fenced on " + describe(methodOf(thisJoinPointStaticPart))
                + ", a static method, is not supported: the call is refused rather than run unfenced; make it an "
                + "instance method (of a bean, or of any woven object)");
    }

    /**
     * The route of {@code at} with the current configuration: cached, except when it cannot be decided now. A keyed
     * bracket is a route only for the keyed advice ({@code withArguments}), which has the call's arguments.
     */
    private Object route(JoinPoint.StaticPart at, boolean withArguments) {
        Routes current = routes;
        if (current == null) {
            return CALLBACK; // refused there, with the message saying how to configure
        }
        Object route = current.routes.get(at);
        return route != null ? route : current.decide(at, withArguments);
    }

    /** Marks {@code at} as routed to the callback advice, on this thread; returns what to restore afterwards. */
    private static JoinPoint.StaticPart pend(JoinPoint.StaticPart at) {
        if (!callbacks) {
            callbacks = true;
        }
        JoinPoint.StaticPart previous = CALLBACK_PENDING.get();
        CALLBACK_PENDING.set(at);
        return previous;
    }

    /**
     * Restores what {@link #pend} replaced: the mark of an enclosing routing advice whose callback advice has not run
     * yet (an unrelated advice between the two made a fenced call of its own), or nothing.
     */
    private static void unpend(JoinPoint.StaticPart previous) {
        if (previous == null) {
            CALLBACK_PENDING.remove();
        } else {
            CALLBACK_PENDING.set(previous);
        }
    }

    /** Whether the routing advice sent {@code at} to the callback advice, just now, on this thread. */
    static boolean callbackPending(JoinPoint.StaticPart at) {
        return callbacks && CALLBACK_PENDING.get() == at;
    }

    private static Method methodOf(JoinPoint.StaticPart at) {
        return ((MethodSignature) at.getSignature()).getMethod();
    }

    private FencingSupport supportFor(Method method) {
        Routes current = routes;
        if (current == null) {
            throw new FencingConfigurationException("FencingAspect is woven into "
                    + describe(method)
                    + " but not configured, so the call is refused; use @EnableFencing(mode = AdviceMode.ASPECTJ) or "
                    + "call FencingAspect.aspectOf().configure(...) at startup. If this application also uses "
                    + "@EnableFencing in PROXY mode, stop weaving: the fence must not run twice");
        }
        return current.support;
    }

    /** {@code SimpleClassName.method(ParamType, ...)}: woven code runs in the user's own class, never a proxy. */
    private static String describe(Method method) {
        return ClassUtils.getShortName(method.getDeclaringClass()) + "." + method.getName()
                + Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName)
                .collect(Collectors.joining(", ", "(", ")"));
    }

    /** Throws {@code t} unchanged, checked or not: the woven method may declare it, the advice cannot. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E rethrow(Throwable t) throws E {
        throw (E) t;
    }

    /** The woven body as the guard's callback; the advice's anonymous subclasses call {@code proceed()}. */
    private abstract static class Body<C> implements FenceGuard.Proceed<C, Object> {

        abstract Object run() throws Throwable;

        @Override
        public final Object proceed(C ignored) throws Throwable {
            return run();
        }
    }

    /**
     * One configuration's routes, per join point (a join point's static part is one object per woven method, so the
     * map compares identities). A configuration replaced by {@link #configure} takes its routes with it.
     */
    private static final class Routes {
        final FencingSupport support;
        final ConcurrentHashMap<JoinPoint.StaticPart, Object> routes = new ConcurrentHashMap<>();

        Routes(FencingSupport support) {
            this.support = support;
        }

        /**
         * A bracket when the support has one for the method (a keyed one only {@code withArguments}: a join point is
         * matched by the keyed advice or the unkeyed one, never both, so one advice decides each route), straight
         * through when it is not fenced, else the callback; a failure (an invalid annotation, a missing collaborator)
         * is not cached: the callback raises it again on every call.
         */
        Object decide(JoinPoint.StaticPart at, boolean withArguments) {
            Method method = methodOf(at);
            Object route;
            try {
                Class<?> type = method.getDeclaringClass();
                FenceBracket bracket = support.bracketFor(method, type);
                if (bracket != null && bracket.point().hasKey() && !withArguments && method.getParameterCount() > 0) {
                    bracket = null; // the weaving split saw no key, the fence has one: the callback refuses the call
                }
                route = bracket != null ? bracket : support.fences(method, type) ? CALLBACK : PLAIN;
            } catch (RuntimeException e) {
                return CALLBACK;
            }
            Object raced = routes.putIfAbsent(at, route);
            return raced != null ? raced : route;
        }
    }
}
