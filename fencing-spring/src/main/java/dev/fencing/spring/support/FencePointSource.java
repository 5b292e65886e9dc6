package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.guard.AsyncReturnTypes;
import dev.fencing.guard.FenceBracket;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.guard.KeyValues;
import dev.fencing.metrics.FencingMetrics;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Finds {@code @Fenced} for a method invoked on a target class, as Spring finds {@code @Transactional}: on the
 * most specific method and the methods it overrides or implements, then on the target class and its supertypes
 * (public methods only). Where it applies is looked up once per target class and method by the shared
 * {@link FenceResolutions} (which the PROXY-mode pointcut and the startup validator ask too); the result built from
 * it, a {@link FencePoint} with its key parsed and its counters created, is cached here per target class and method,
 * with a sentinel for methods that are not fenced, and found on each call first by the identity of the invoked
 * {@code Method} instance ({@link FenceTable}): nothing is reflected, parsed or registered after the first call.
 * A point the guard can fence as a bracket (a checking point, a store that fences a write its caller runs) is
 * cached as its {@link FenceBracket}, so the proxy interceptor and the woven aspect run the target inside it.
 * A method returning a reactive type (see {@link ReactiveReturnTypes}) gets a {@link ReactivePoint}: its fence point
 * with the adapter of its type and the reactive fence, created when the first such method is found.
 */
final class FencePointSource {

    private static final Object NONE = new Object();

    /** The parameter names a key reads, found as {@link SpelKeyFunction} finds them. */
    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

    private final FenceResolutions resolutions;
    private final FencingMetrics metrics;
    private final FenceGuard guard;
    private final Supplier<ReactiveFencer> reactive;
    /**
     * Per method, its fence for the target class it is invoked on: a {@link OneType} while only one class was seen
     * (then a miss of the table is one map hit and one reference comparison), a map by class once several were.
     */
    private final ConcurrentHashMap<Method, Object> cache = new ConcurrentHashMap<>();
    /** The same fences by the identity of the {@code Method} instance and class: what a call looks up first. */
    private final FenceTable table = new FenceTable();

    /**
     * @param resolutions where {@code @Fenced} applies, looked up once and shared with the pointcut and the validator
     * @param metrics     where each point's counters are created
     * @param guard       validates each point against the configuration (an acquiring point needs an issuer)
     */
    FencePointSource(FenceResolutions resolutions, FencingMetrics metrics, FenceGuard guard) {
        this(resolutions, metrics, guard, () -> {
            throw new FencingConfigurationException("reactive @Fenced methods need @EnableFencing with a "
                    + "ReactiveFenceStore bean; this FencingSupport was built from a blocking guard only");
        });
    }

    /**
     * @param reactive the reactive fence, asked for when the first reactive fenced method is found; it throws
     *                 {@link FencingConfigurationException} saying what is missing
     */
    FencePointSource(FenceResolutions resolutions, FencingMetrics metrics, FenceGuard guard,
                     Supplier<ReactiveFencer> reactive) {
        this.resolutions = Objects.requireNonNull(resolutions, "resolutions");
        this.metrics = metrics;
        this.guard = guard;
        this.reactive = Objects.requireNonNull(reactive, "reactive");
    }

    /**
     * The fence point for {@code method} invoked on {@code targetClass}, or {@code null} when it is not fenced.
     *
     * @param targetClass the class of the target object, or {@code null} to use the method's declaring class
     * @throws dev.fencing.FencingConfigurationException when the annotation is invalid (thrown again on every call)
     */
    FencePoint pointFor(Method method, Class<?> targetClass) {
        Object fence = fenceFor(method, targetClass);
        if (fence instanceof ReactivePoint reactivePoint) {
            return reactivePoint.point();
        }
        if (fence instanceof FenceBracket bracket) {
            return bracket.point();
        }
        return fence instanceof FuturePoint futurePoint ? futurePoint.point() : (FencePoint) fence;
    }

    /**
     * The fence of {@code method} invoked on {@code targetClass}: a {@link FenceBracket} when the guard can fence the
     * point as a bracket around a body its caller runs ({@link FenceGuard#bracket}), else a {@link FencePoint}, a
     * {@link ReactivePoint} for a method returning a reactive type, a {@link FuturePoint} for an {@code @Async} method
     * returning a future, or {@code null} when it is not fenced.
     *
     * @throws dev.fencing.FencingConfigurationException when the annotation is invalid (thrown again on every call)
     */
    Object fenceFor(Method method, Class<?> targetClass) {
        Class<?> type = targetClass != null ? targetClass : method.getDeclaringClass();
        Object fence = table.find(method, type);
        if (fence == FenceTable.MISS) {
            fence = looked(method, type);
        }
        return fence == NONE ? null : fence;
    }

    /** The identity-keyed table; for tests. */
    FenceTable table() {
        return table;
    }

    /** {@link #fenceFor} when the table has no entry for this {@code Method} instance: kept out of the hot path. */
    private Object looked(Method method, Class<?> type) {
        Object cached = cache.get(method);
        Object fence;
        if (cached instanceof OneType one && one.type == type) {
            fence = one.fence;
        } else if (cached instanceof ConcurrentHashMap<?, ?> byType && (fence = byType.get(type)) != null) {
            // found for this class among several
        } else {
            fence = cached(method, type);
        }
        table.put(method, type, fence);
        return fence;
    }

    /**
     * Builds the fence of {@code method} on {@code type} and caches it; when another thread cached one first, that
     * one is returned, so every call sees one point (and one set of counters). A build that fails is not cached.
     */
    private Object cached(Method method, Class<?> type) {
        Resolution found = resolutions.resolutionFor(method, type);
        Object built = found == null ? NONE : build(found);
        Object entry = cache.compute(method, (m, current) -> {
            if (current == null) {
                return new OneType(type, built);
            }
            if (current instanceof OneType one) {
                if (one.type == type) {
                    return current;
                }
                ConcurrentHashMap<Class<?>, Object> byType = new ConcurrentHashMap<>();
                byType.put(one.type, one.fence);
                byType.put(type, built);
                return byType;
            }
            @SuppressWarnings("unchecked")
            ConcurrentHashMap<Class<?>, Object> byType = (ConcurrentHashMap<Class<?>, Object>) current;
            byType.putIfAbsent(type, built);
            return current;
        });
        return entry instanceof OneType one ? one.fence : ((ConcurrentHashMap<?, ?>) entry).get(type);
    }

    /** The fence of a method for the one target class it was invoked on so far. */
    private record OneType(Class<?> type, Object fence) {
    }

    /**
     * Where {@code @Fenced} applies to {@code method} on {@code targetClass}, without building or caching anything;
     * {@code null} when it does not apply. Only {@link FenceResolutions} calls it, once per class and method: everyone
     * else asks that cache.
     */
    static Resolution resolve(Method method, Class<?> targetClass) {
        if (Modifier.isStatic(method.getModifiers())) {
            return null;
        }
        Class<?> userClass = userType(targetClass, method);
        Method specific = AopUtils.getMostSpecificMethod(method, userClass);
        MergedAnnotations onMethod = MergedAnnotations.from(specific, SearchStrategy.TYPE_HIERARCHY);
        if (!onMethod.isPresent(Fenced.class) && specific != method) {
            onMethod = MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY);
        }
        List<MergedAnnotation<Fenced>> declared = Stream.concat(onMethod.stream(Fenced.class),
                onInterfaces(specific, userClass)).toList();
        if (!declared.isEmpty()) {
            MergedAnnotation<Fenced> first = onMethod.isPresent(Fenced.class) ? onMethod.get(Fenced.class)
                    : declared.get(0);
            return resolution(first, declared, specific, userClass);
        }
        if (!Modifier.isPublic(specific.getModifiers()) || ReflectionUtils.isObjectMethod(specific)
                || isObjectMethodOverride(specific)) {
            return null;
        }
        MergedAnnotations onType = MergedAnnotations.from(userClass, SearchStrategy.TYPE_HIERARCHY);
        if (!onType.isPresent(Fenced.class) && specific.getDeclaringClass() != userClass) {
            onType = MergedAnnotations.from(specific.getDeclaringClass(), SearchStrategy.TYPE_HIERARCHY);
        }
        if (!onType.isPresent(Fenced.class)) {
            return null;
        }
        List<MergedAnnotation<Fenced>> onTypes = onTypesFor(onType.stream(Fenced.class).toList(), specific, userClass);
        return resolution(onType.get(Fenced.class), onTypes, specific, userClass);
    }

    /**
     * The declarations of {@code specific} on the interfaces of {@code userClass} that its own search does not reach:
     * a method a superclass implements for an interface the class itself declares ({@code class Impl extends Base
     * implements Api}, with {@code go()} in {@code Base} and {@code @Fenced} on {@code Api.go()}).
     */
    private static Stream<MergedAnnotation<Fenced>> onInterfaces(Method specific, Class<?> userClass) {
        if (specific.getDeclaringClass() == userClass || specific.getDeclaringClass().isInterface()) {
            return Stream.empty();
        }
        return ClassUtils.getAllInterfacesForClassAsSet(userClass).stream()
                .filter(face -> !face.isAssignableFrom(specific.getDeclaringClass()))
                .flatMap(face -> Arrays.stream(face.getMethods()))
                .filter(declared -> implementedBy(declared, specific, userClass)).distinct()
                .flatMap(declared -> MergedAnnotations.from(declared, SearchStrategy.TYPE_HIERARCHY)
                        .stream(Fenced.class));
    }

    /**
     * Whether {@code specific} is what runs on {@code userClass} for the interface method {@code declared}: by name
     * and parameter count first, then as Spring resolves it (a generic interface's {@code go(T)} runs as
     * {@code go(Thing)} through a bridge method).
     */
    private static boolean implementedBy(Method declared, Method specific, Class<?> userClass) {
        return declared.getName().equals(specific.getName())
                && declared.getParameterCount() == specific.getParameterCount()
                && !Modifier.isStatic(declared.getModifiers())
                && (declared.equals(specific) || AopUtils.getMostSpecificMethod(declared, userClass).equals(specific));
    }

    /**
     * Of type-level declarations that disagree, the ones that can apply to {@code specific}: those on classes, and
     * those on interfaces that have the method ({@code @Fenced("orders") OrderWriter} does not speak for
     * {@code AuditWriter.write()} on a class implementing both); all of them when they agree.
     */
    private static List<MergedAnnotation<Fenced>> onTypesFor(List<MergedAnnotation<Fenced>> all, Method specific,
                                                             Class<?> userClass) {
        if (all.stream().map(MergedAnnotation::synthesize).distinct().count() <= 1) {
            return all;
        }
        List<MergedAnnotation<Fenced>> having = all.stream().filter(one -> !declaringType(one).isInterface()
                || Arrays.stream(declaringType(one).getMethods())
                        .anyMatch(declared -> implementedBy(declared, specific, userClass))).toList();
        return having.isEmpty() ? all : having;
    }

    /**
     * The resolution of the {@code @Fenced} declarations {@code all} (all on the method, or all on types): the one
     * Spring finds first ({@code first}, when among them), unless a declaration in a subtype of its declaring type
     * overrides it. When declarations that no other overrides disagree (the same method annotated on two interfaces
     * with two resources, or on an interface and on an unrelated superclass), or give one key text over parameters
     * named differently, the resolution carries the conflict, which fails startup, instead of leaving the choice to
     * the order of {@code implements}.
     */
    private static Resolution resolution(MergedAnnotation<Fenced> first, List<MergedAnnotation<Fenced>> all,
                                         Method specific, Class<?> userClass) {
        List<MergedAnnotation<Fenced>> nearest = all.stream()
                .filter(one -> all.stream().noneMatch(other -> overrides(other, one))).toList();
        // on one element, @Fenced itself before one a composed annotation carries
        MergedAnnotation<Fenced> chosen = nearest.stream()
                .filter(one -> Objects.equals(one.getSource(), first.getSource()))
                .min(Comparator.comparingInt(MergedAnnotation::getDistance)).orElse(nearest.get(0));
        Fenced annotation = chosen.synthesize();
        String conflict = null;
        if (nearest.stream().anyMatch(one -> !one.synthesize().equals(annotation))) {
            conflict = nearest.stream().map(one -> describe(one) + " on " + sourceOf(one)).distinct()
                    .collect(Collectors.joining(" and "));
        } else if (!annotation.key().isBlank() && parameterNames(nearest).size() > 1) {
            // equal texts, but each names the parameters of its own declaration: the key would read another argument
            // depending on which declaration is found first
            conflict = nearest.stream().map(one -> describe(one) + " on " + sourceOf(one) + ", whose parameters are "
                    + parameterNames(List.of(one)).stream().map(names -> "(" + String.join(", ", names) + ")")
                    .collect(Collectors.joining())).distinct().collect(Collectors.joining(" and "));
        }
        Class<? extends Annotation> composedBy = chosen.getDistance() > 0 ? chosen.getRoot().getType() : null;
        return new Resolution(annotation, specific, userClass, chosen.getSource(), conflict, composedBy);
    }

    private static String describe(MergedAnnotation<Fenced> one) {
        return describe(one.synthesize());
    }

    /** {@code fenced} as it is written: {@code @Fenced(resource = "orders", key = "#id")}. */
    static String describe(Fenced fenced) {
        return "@Fenced(resource = \"" + fenced.resource() + "\""
                + (fenced.key().isBlank() ? "" : ", key = \"" + fenced.key() + "\"")
                + (fenced.acquire() ? ", acquire = true" : "")
                + (fenced.reportUnchecked() ? "" : ", reportUnchecked = false") + ")";
    }

    /** The distinct lists of parameter names of the methods declaring {@code declarations} (types have none). */
    private static Set<List<String>> parameterNames(List<MergedAnnotation<Fenced>> declarations) {
        Set<List<String>> names = new LinkedHashSet<>();
        for (MergedAnnotation<Fenced> one : declarations) {
            if (one.getSource() instanceof Method method) {
                String[] found = PARAMETER_NAMES.getParameterNames(method);
                if (found != null) {
                    names.add(List.of(found));
                }
            }
        }
        return names;
    }

    /** Whether {@code other} is declared on a subtype of the type declaring {@code one}, so it wins over it. */
    private static boolean overrides(MergedAnnotation<Fenced> other, MergedAnnotation<Fenced> one) {
        Class<?> overriding = declaringType(other);
        Class<?> overridden = declaringType(one);
        return overriding != overridden && overridden.isAssignableFrom(overriding);
    }

    private static Class<?> declaringType(MergedAnnotation<Fenced> annotation) {
        return annotation.getSource() instanceof Method method ? method.getDeclaringClass()
                : (Class<?>) annotation.getSource();
    }

    private static String sourceOf(MergedAnnotation<Fenced> annotation) {
        return annotation.getSource() instanceof Method method ? describe(method.getDeclaringClass(), method)
                : ((Class<?>) annotation.getSource()).getName();
    }

    /**
     * Builds and validates the point: besides the annotation itself, refuses Kotlin {@code suspend} functions and
     * asynchronous return types other than reactive ones (a future is allowed on an {@code @Async} method, whose body
     * and fence run on the executor: {@link AsyncMethods}), and a key that reads a parameter whose declared type can
     * never have a stable text. A reactive method's point is validated by the reactive fence, which must exist (a
     * reactive store is declared).
     */
    private Object build(Resolution found) {
        String operation = found.operation();
        if (found.conflict() != null) {
            throw new FencingConfigurationException("@Fenced on " + operation + " is ambiguous: " + found.conflict()
                    + ", and neither declaration overrides the other (a declaration in a subtype wins over its "
                    + "supertypes'); annotate " + operation + " itself with the fence that applies");
        }
        Fenced fenced = found.annotation();
        AsyncReturnTypes.checkNotSuspending(found.method().getParameterTypes(), operation);
        Class<?> returnType = found.method().getReturnType();
        ReactiveAdapter adapter = ReactiveReturnTypes.adapterFor(returnType);
        AsyncMethods.checkFuture(found.method(), found.targetClass(), operation);
        if (adapter == null && !AsyncMethods.isFuture(returnType)) {
            AsyncReturnTypes.check(returnType, operation);
            AsyncReturnTypes.warnIfLazy(returnType, operation);
        }
        String key = fenced.key();
        FencePoint point;
        if (key.isBlank()) {
            point = new FencePoint(operation, fenced.resource(), null, null, fenced.acquire(), fenced.reportUnchecked(),
                    metrics);
        } else {
            Method names = found.source() instanceof Method annotated ? annotated : found.method();
            SpelKeyFunction function = SpelKeyFunction.compile(key, names, operation);
            int parameter = function.parameterIndex();
            if (parameter >= 0) {
                KeyValues.checkParameterType(found.method().getParameterTypes()[parameter], operation, key);
            }
            point = new FencePoint(operation, fenced.resource(), function, key, fenced.acquire(),
                    fenced.reportUnchecked(), metrics);
        }
        guard.modes().declareAlso(point.resource());
        if (adapter == null) {
            guard.validate(point);
            if (AsyncMethods.isFuture(returnType)) {
                return new FuturePoint(point);
            }
            FenceBracket bracket = guard.bracket(point);
            return bracket != null ? bracket : point;
        }
        ReactiveFencer fencer;
        try {
            fencer = reactive.get();
        } catch (FencingConfigurationException e) {
            throw new FencingConfigurationException("@Fenced on " + operation + " returns "
                    + returnType.getSimpleName() + ", a reactive type, and " + e.getMessage(), e);
        }
        fencer.validate(point);
        return new ReactivePoint(point, adapter, fencer);
    }

    /**
     * The fence of an {@code @Async} method returning a future: the check holds until the future its body returns
     * is complete ({@link AsyncMethods#awaited}), so work the body hands to yet another thread is still inside it.
     *
     * @param point its fence point
     */
    record FuturePoint(FencePoint point) {
    }

    /**
     * The fence of a method returning a reactive type.
     *
     * @param point   its fence point
     * @param adapter converts its return type to and from a Reactive Streams publisher
     * @param fencer  the reactive fence that runs it
     */
    record ReactivePoint(FencePoint point, ReactiveAdapter adapter, ReactiveFencer fencer) {
    }

    /**
     * The type the user wrote for {@code method} invoked on {@code type}: the class behind a CGLIB subclass; for a
     * JDK proxy class, the first of its interfaces (in declaration order, so the repository interface before
     * Spring's marker interfaces) that declares or inherits the method, or the method's declaring class when none does.
     */
    private static Class<?> userType(Class<?> type, Method method) {
        if (!Proxy.isProxyClass(type)) {
            return ClassUtils.getUserClass(type);
        }
        Class<?> declaring = method.getDeclaringClass();
        for (Class<?> candidate : type.getInterfaces()) {
            if (declaring.isAssignableFrom(candidate)) {
                return candidate;
            }
        }
        return declaring;
    }

    private static boolean isObjectMethodOverride(Method method) {
        return ReflectionUtils.isEqualsMethod(method) || ReflectionUtils.isHashCodeMethod(method)
                || ReflectionUtils.isToStringMethod(method);
    }

    /**
     * Where {@code @Fenced} was found for one method.
     *
     * @param annotation  the annotation that applies
     * @param method      the most specific method on the target class
     * @param targetClass the user class (not a proxy class)
     * @param source      where the annotation is declared: a {@link Method}, or a {@link Class} for a type-level one
     * @param conflict    {@code null}, or the disagreeing declarations none of which overrides the others, named for
     *                    the startup failure ({@link #build} refuses the point)
     * @param composedBy  {@code null} when {@code @Fenced} itself is declared on {@code source}; else the composed
     *                    annotation declared there that carries it as a meta-annotation (which Spring's search finds
     *                    and AspectJ's pointcuts do not)
     */
    record Resolution(Fenced annotation, Method method, Class<?> targetClass, Object source, String conflict,
                      Class<? extends Annotation> composedBy) {

        /** The method as shown in messages and exceptions: {@code AccountRepository.save(Account)}. */
        String operation() {
            return describe(targetClass, method);
        }

        /**
         * Whether AspectJ weaving cannot see the annotation: it sits neither on the method that runs nor on the class
         * declaring that method (but on an interface, an overridden method, or another type in the hierarchy).
         */
        boolean invisibleToWeaving() {
            return source instanceof Method annotated ? !annotated.equals(method)
                    : source != method.getDeclaringClass();
        }

        /** Where the annotation is declared, for messages. */
        String sourceDescription() {
            return source instanceof Method annotated ? describe(annotated.getDeclaringClass(), annotated)
                    : "type " + ((Class<?>) source).getName();
        }
    }

    /**
     * {@code SimpleClassName.method(ParamType, ...)}, naming the user's type: the class behind a CGLIB subclass, and
     * for a JDK proxy class (a Spring Data repository, say) the proxied interface that declares or inherits the
     * method, never {@code $Proxy98}.
     */
    static String describe(Class<?> type, Method method) {
        return ClassUtils.getShortName(userType(type, method)) + "." + method.getName()
                + Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName)
                .collect(Collectors.joining(", ", "(", ")"));
    }
}
