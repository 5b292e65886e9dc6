package dev.fencing.spring.support;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.guard.FencePoint;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.token.FencingToken;
import dev.fencing.spring.FencingConfigurer;
import dev.fencing.store.FenceStore;
import org.springframework.aop.Advisor;
import org.springframework.aop.SpringProxy;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.scope.ScopedObject;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.DecoratingProxy;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.env.Environment;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/**
 * Checks every {@code @Fenced} method of every bean once all singletons exist, and fails the context refresh with
 * one message listing each problem and its method: invalid annotations (blank resource, bad key, acquire without
 * issuer), static methods, and methods the chosen mode would silently leave unfenced (private or final under
 * proxies, a JDK proxy without the method, a class that was not woven, an annotation woven code cannot see, a
 * fence ordered outside {@code @Transactional}), and resource names that look like one
 * resource but are several ({@link ResourceNames}). Beans made
 * by a {@code FactoryBean} are checked by their product type, and JDK proxies (every Spring Data repository) by the
 * interfaces they implement. A bean not created yet that is known by a supertype only (a lazy
 * {@code @Bean AccountRepository}) is checked through the classes under the application's packages that implement
 * it ({@link LazyBeanClasses}); one whose class is not among them, when it is created ({@link LateBeanCheck}).
 *
 * <p>It is also where {@code @EnableFencing} first resolves its store, issuer and meter registry, after every
 * singleton exists (so a missing store fails startup here), and where it runs {@link FenceStore#verify()}, after
 * the application's own database initialization; a store behind a route that is no bean first gets the bean factory
 * ({@link RoutedStores}), as it would as a bean.
 */
final class FencingStartupValidator implements SmartInitializingSingleton, BeanFactoryAware {

    private static final Log log = LogFactory.getLog(FencingStartupValidator.class);

    private static final String TRANSACTIONAL = "org.springframework.transaction.annotation.Transactional";
    private static final String TRANSACTION_ADVISOR =
            "org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor";

    /** Where carrier modules list their startup checks, under the key {@code java.util.function.BiFunction}. */
    static final String STARTUP_CHECKS = "META-INF/fencing/startup-checks.factories";

    /**
     * A check listed in {@link #STARTUP_CHECKS} whose class this class loader does not see (a class loader that
     * hides its module, as tests do) is skipped: its module is not there to check. Any other failure fails startup.
     */
    private static final SpringFactoriesLoader.FailureHandler CHECK_NOT_ON_CLASS_PATH = (type, name, failure) -> {
        if (failure instanceof ClassNotFoundException || failure instanceof NoClassDefFoundError) {
            log.debug("fencing: startup check " + name + " skipped, its class is not visible: " + failure);
            return;
        }
        throw new IllegalStateException("Could not create fencing's startup check " + name, failure);
    };

    private final FencingSupport support;
    private final AdviceMode mode;
    private final int order;
    private final Environment environment;
    /** The context's {@link FencingConfigurer}s, read once the singletons exist. */
    private final ObjectProvider<FencingConfigurer> configurers;
    private ConfigurableListableBeanFactory beanFactory;
    /** The resources the {@code @Fenced} methods checked declare; the methods that check each, keyed or not. */
    private final Set<String> declared = new TreeSet<>();
    private final Map<String, Set<String>> unkeyed = new TreeMap<>();
    private final Map<String, Set<String>> keyed = new TreeMap<>();
    /** The classes and interfaces checked, at startup and after ({@link #checkCreatedLater}). */
    private final Set<Class<?>> checked = ConcurrentHashMap.newKeySet();
    /** The transaction advisor's order startup found, for the beans created later. */
    private volatile Integer lateTransactionOrder;

    FencingStartupValidator(FencingSupport support, AdviceMode mode, int order, Environment environment,
                            ObjectProvider<FencingConfigurer> configurers) {
        this.support = support;
        this.mode = mode;
        this.order = order;
        this.environment = environment;
        this.configurers = configurers;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
        this.beanFactory = (ConfigurableListableBeanFactory) beanFactory;
    }

    @Override
    public void afterSingletonsInstantiated() {
        // resolves store, issuer and meter registry now that every singleton is fully post-processed; without a
        // store (and without allowInMemoryStore) this fails with what to add
        support.points();
        Set<String> problems = new LinkedHashSet<>();
        boolean acquiring = false;
        Integer transactionOrder = transactionAdvisorOrder();
        lateTransactionOrder = transactionOrder;
        Set<Class<?>> beanTypes = new HashSet<>();
        TestDoubles doubles = TestDoubles.of(beanFactory.getBeanClassLoader());
        UnfencedRepositoryWrites repositoryWrites = UnfencedRepositoryWrites.of(beanFactory.getBeanClassLoader(),
                environment);
        // the bean definitions, and the singletons registered by hand (registerSingleton), which have none
        Set<String> names = new java.util.LinkedHashSet<>(List.of(beanFactory.getBeanDefinitionNames()));
        names.addAll(List.of(beanFactory.getSingletonNames()));
        for (String name : names) {
            Object singleton = beanFactory.isFactoryBean(name) || !beanFactory.containsSingleton(name)
                    ? null : beanFactory.getSingleton(name);
            if (doubles.isStub(singleton)) {
                continue; // a test's Mockito mock runs none of the fenced code: no issuer, store or key to check
            }
            for (Class<?> userType : typesToCheck(name, singleton)) {
                beanTypes.add(userType);
                acquiring |= checkType(name, userType, singleton, transactionOrder, doubles, repositoryWrites,
                        problems);
            }
        }
        if (mode == AdviceMode.PROXY) {
            // a bean not created yet (lazy, a prototype) known by a supertype may be of any class implementing it
            for (Map.Entry<Class<?>, String> candidate : LazyBeanClasses.candidates(beanFactory, beanTypes)
                    .entrySet()) {
                beanTypes.add(candidate.getKey());
                acquiring |= checkType(candidate.getValue(), candidate.getKey(), null, transactionOrder, doubles,
                        repositoryWrites, problems);
            }
        }
        checked.addAll(beanTypes);
        // the beans created while the context started that startup did not see as beans (a prototype injected into
        // a singleton, known by its interface): their classes are checked as those of beans created later are
        if (beanFactory.containsLocalBean(LateBeanCheck.BEAN)) {
            for (LateBeanCheck.Created created : beanFactory.getBean(LateBeanCheck.BEAN, LateBeanCheck.class)
                    .takeEarly()) {
                if (created.bean() == null || created.bean() instanceof FactoryBean<?>
                        || doubles.isStub(created.bean())) {
                    continue; // a factory is checked by its product, post-processed on its own
                }
                for (Class<?> userType : typesOf(created.bean())) {
                    if (checked.add(userType)) {
                        acquiring |= checkType(created.name(), userType, created.bean(), transactionOrder, doubles,
                                repositoryWrites, problems);
                    }
                }
            }
        }
        // every fenced method is a bean's under proxies; woven classes need not be beans, so in ASPECTJ mode the
        // class files under the application's packages are read too (and a point built later declares its resource)
        String where = "";
        String outside = "";
        if (mode != AdviceMode.PROXY) {
            Set<String> packages = DeclaredResources.packages(beanFactory);
            Set<String> fencedTypes = new TreeSet<>();
            List<DeclaredResources.LambdaSite> lambdas = new ArrayList<>();
            declared.addAll(DeclaredResources.scan(packages, beanFactory.getBeanClassLoader(), fencedTypes, lambdas));
            WovenClassCheck.check(support, beanFactory.getBeanClassLoader(), fencedTypes, beanTypes, problems,
                    unkeyed, keyed);
            WovenClassCheck.checkLambdas(support, beanFactory.getBeanClassLoader(), lambdas, problems);
            where = " by a bean or a class under " + packages;
            outside = "; if a woven class outside " + packages + " declares it, add its package to a @ComponentScan "
                    + "or put the @EnableFencing class in a package above it";
        }
        ResourceNames.overlaps(unkeyed, keyed, problems);
        repositoryWrites.addProblems(problems);
        for (String unknown : support.modes().declare(declared, keyed.keySet())) {
            String meant = unbracketed(unknown, declared);
            if (meant != null) {
                problems.add("a fence mode is set for resource '" + FencingToken.printable(unknown) + "', which no "
                        + "@Fenced method declares: it is what Spring Boot makes of the key fencing.modes." + meant
                        + " written without brackets (such a key keeps only letters, digits, '-' and '_'), so the mode "
                        + "meant for '" + meant + "' would not apply; write fencing.modes.[" + meant + "]");
                continue;
            }
            String base = FenceModes.entityOf(unknown, declared);
            if (base != null) {
                problems.add("a fence mode is set for resource '" + FencingToken.printable(unknown) + "': "
                        + FenceModes.undeclared(unknown, declared) + " (fencing.modes." + base + ")");
                continue;
            }
            problems.add("a fence mode is set for resource '" + FencingToken.printable(unknown) + "', which no "
                    + "@Fenced method declares" + where + " (declared: " + declared + "); a misspelt name leaves the "
                    + "resource meant in the default mode: fix fencing.modes.<resource> (a name with ':' needs "
                    + "brackets: fencing.modes.[orders:eu]) or @EnableFencing(observe)" + outside);
        }
        String signingProblem = acquiring ? support.signingProblemOfAcquire() : null;
        if (signingProblem != null) {
            problems.add(signingProblem);
        }
        String singleJvmStore = SingleJvmStoreCheck.problem(beanFactory, environment, Configurers.of(configurers),
                support.store());
        if (singleJvmStore != null) {
            problems.add(singleJvmStore);
        }
        // the carrier modules' checks (fencing-web's, fencing-amqp's), with or without Spring Boot: each a
        // BiFunction<ListableBeanFactory, Environment, String> answering the problem or null, listed in a resource of
        // fencing's own, so that those modules need no type of this one (docs/modules.md)
        for (BiFunction<?, ?, ?> check : SpringFactoriesLoader.forResourceLocation(STARTUP_CHECKS,
                beanFactory.getBeanClassLoader()).load(BiFunction.class, CHECK_NOT_ON_CLASS_PATH)) {
            @SuppressWarnings("unchecked")
            Object problem = ((BiFunction<ListableBeanFactory, Environment, ?>) check).apply(beanFactory, environment);
            if (problem != null) {
                problems.add(problem.toString());
            }
        }
        try {
            RoutedStores.introduce(beanFactory, support.store());
            support.verifyStore();
        } catch (FencingConfigurationException e) {
            problems.add(e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new FencingConfigurationException("Invalid fencing configuration (mode " + mode
                    + "; the @Fenced methods, the fence store, the issuer):\n  - "
                    + String.join("\n  - ", problems));
        }
        warnOfObservedChecks(support.modes());
        repositoryWrites.warn();
        if (beanFactory.containsBean(LateBeanCheck.BEAN)) {
            beanFactory.getBean(LateBeanCheck.BEAN, LateBeanCheck.class).startedBy(this);
        }
    }

    /**
     * Checks the {@code @Fenced} methods of {@code userType}, a type of bean {@code name} ({@code singleton} when it
     * exists, else {@code null}), adding each problem to {@code problems} and each resource to {@link #declared},
     * {@link #keyed} or {@link #unkeyed}; whether one of them acquires.
     */
    private boolean checkType(String name, Class<?> userType, Object singleton, Integer transactionOrder,
                              TestDoubles doubles, UnfencedRepositoryWrites repositoryWrites, Set<String> problems) {
        if (!AnnotationUtils.isCandidateClass(userType, Fenced.class)) {
            return false;
        }
        boolean acquiring = false;
        List<Method> fenced = new ArrayList<>();
        Set<Method> checks = new HashSet<>();
        List<Method> methods = userMethods(userType);
        for (Method method : methods) {
            check(name, userType, method, singleton, transactionOrder, problems);
            if (!Modifier.isStatic(method.getModifiers())
                    && support.resolutions().resolutionFor(method, userType) != null) {
                fenced.add(method);
                FencePoint point = point(method, userType);
                if (point == null) {
                    continue;
                }
                declared.add(point.resource());
                if (point.acquire()) {
                    // an acquiring point checks nothing, so an unkeyed lock held above keyed ones (one batch at
                    // a time, each entity checked under its own key) mixes no names
                    acquiring = true;
                } else {
                    checks.add(method);
                    (point.hasKey() ? keyed : unkeyed).computeIfAbsent(point.resource(), r -> new TreeSet<>())
                            .add(FencePointSource.describe(userType, method));
                }
            }
        }
        if (mode == AdviceMode.PROXY) {
            // under weaving a fenced repository interface is a problem of its own
            repositoryWrites.inspect(userType, methods, checks, new HashSet<>(fenced));
            // a FactoryBean's product (a Spring Data repository, say) is checked as the object it made
            Object bean = singleton == null && !fenced.isEmpty() ? factoryProduct(name, userType) : singleton;
            String unproxied = doubles.isStub(bean) ? null : unproxied(name, bean, userType, fenced);
            if (unproxied != null) {
                problems.add(unproxied);
            }
        }
        // an interface (a JDK proxy's, such as a Spring Data repository's): its default methods are read
        if (mode == AdviceMode.PROXY && !fenced.isEmpty()) {
            for (String call : SelfInvocations.find(userType, fenced)) {
                problems.add(call + " on the bean itself: a Spring proxy does not see a call from a bean "
                        + "to its own method, so that call would run unfenced; make the call through "
                        + "another bean (move the fenced method to a repository, say), or weave "
                        + "(@EnableFencing(mode = AdviceMode.ASPECTJ)), which fences self-invocations");
            }
        }
        return acquiring;
    }

    /**
     * Checks a bean created after startup (a lazy one, a prototype, a scoped target) whose class startup did not
     * check: a bean known by a supertype whose class lies outside the packages read at startup. Its problems fail its
     * creation, so it never serves a call; each class is checked once.
     *
     * @throws FencingConfigurationException naming each problem
     */
    synchronized void checkCreatedLater(String name, Object bean) {
        TestDoubles doubles = TestDoubles.of(beanFactory.getBeanClassLoader());
        if (doubles.isStub(bean)) {
            return;
        }
        Set<String> problems = new LinkedHashSet<>();
        boolean acquiring = false;
        Integer transactionOrder = lateTransactionOrder; // asks no bean of the factory, which may be creating others
        UnfencedRepositoryWrites repositoryWrites = UnfencedRepositoryWrites.of(beanFactory.getBeanClassLoader(),
                environment);
        Set<String> declaredBefore = new TreeSet<>(declared);
        Map<String, Set<String>> unkeyedBefore = copy(unkeyed);
        Map<String, Set<String>> keyedBefore = copy(keyed);
        List<Class<?>> added = new ArrayList<>();
        for (Class<?> userType : typesOf(bean)) {
            if (checked.add(userType)) {
                added.add(userType);
                acquiring |= checkType(name, userType, bean, transactionOrder, doubles, repositoryWrites, problems);
            }
        }
        ResourceNames.overlaps(unkeyed, keyed, problems); // startup found none: each one is this bean's
        String signingProblem = acquiring ? support.signingProblemOfAcquire() : null;
        if (signingProblem != null) {
            problems.add(signingProblem);
        }
        if (!problems.isEmpty()) {
            // as if never checked: the next attempt to create a bean of the class fails the same way
            added.forEach(checked::remove);
            declared.retainAll(declaredBefore);
            unkeyed.clear();
            unkeyed.putAll(unkeyedBefore);
            keyed.clear();
            keyed.putAll(keyedBefore);
            throw new FencingConfigurationException("Invalid fencing configuration (mode " + mode + ") of bean '"
                    + name + "', created after startup (lazily, or as a prototype or scoped bean) and known at "
                    + "startup by a type whose class could not be checked then (none under the application's "
                    + "packages); it is not created:\n  - " + String.join("\n  - ", problems));
        }
        repositoryWrites.warn();
    }

    private static Map<String, Set<String>> copy(Map<String, Set<String>> methods) {
        Map<String, Set<String>> copy = new TreeMap<>();
        methods.forEach((resource, names) -> copy.put(resource, new TreeSet<>(names)));
        return copy;
    }

    /** Whether startup checked {@code bean}'s classes already (its class, or a JDK proxy's interfaces). */
    boolean checked(Object bean) {
        return checked.containsAll(typesOf(bean));
    }

    /**
     * What is wrong when the singleton {@code bean} (or a singleton {@code FactoryBean}'s product), whose class has the
     * {@code fenced} methods, is not a proxy that runs the fence advisor: Spring's auto-proxy creator never
     * post-processed it (an {@code AopInfrastructureBean}, a singleton registered by hand, a bean created before the
     * auto-proxy creator as a dependency of a bean post-processor), so every call would run unchecked. {@code null}
     * when it runs it, when it is not created yet, or when it is a scoped proxy (its target, created per scope, is
     * proxied then).
     */
    private static String unproxied(String bean, Object singleton, Class<?> userType, List<Method> fenced) {
        if (singleton == null || fenced.isEmpty() || singleton instanceof ScopedObject) {
            return null;
        }
        if (singleton instanceof Advised advised) {
            for (Advisor advisor : advised.getAdvisors()) {
                if (advisor instanceof FencingAdvisor || advisor.getAdvice() instanceof FencingInterceptor) {
                    return null;
                }
            }
        }
        return FencePointSource.describe(userType, fenced.get(0)) + (fenced.size() > 1 ? " (and " + (fenced.size() - 1)
                + " more @Fenced methods)" : "") + " belongs to bean '" + bean + "', which is not a proxy running the "
                + "fence advisor, so its calls would run unchecked: Spring's auto-proxy creator never saw it ("
                + (singleton instanceof AopInfrastructureBean ? "it is an AopInfrastructureBean, which Spring never "
                + "proxies" : "a singleton registered by hand, with registerSingleton, a proxy of the "
                + "application's own, or a bean created before the auto-proxy creator because a BeanPostProcessor "
                + "depends on it: Spring then logs that it 'is not eligible for getting processed by all "
                + "BeanPostProcessors'") + "); declare it as an ordinary bean (@Component, @Bean) that no "
                + "BeanPostProcessor depends on (inject it there through an ObjectProvider, or @Lazy), or weave "
                + "(@EnableFencing(mode = AdviceMode.ASPECTJ))";
    }

    /**
     * Says, once startup accepted them (a store that judges at commit refuses observe mode, and that refusal must not
     * follow a line saying the calls run), that some checks are observed rather than enforced.
     */
    private static void warnOfObservedChecks(FenceModes modes) {
        if (modes.defaultMode() == FenceMode.OBSERVE || modes.resources().containsValue(FenceMode.OBSERVE)) {
            log.warn("Fencing starts in observe mode for " + modes + ": refused tokens are counted "
                    + "(fencing.checks{enforced=\"false\"}) and logged, and the calls run; switch to enforce once "
                    + "the counts say so");
        }
    }

    /**
     * {@code userType}'s methods, each once: an interface that overrides a generic supertype's method (a Spring Data
     * repository's {@code saveAndFlush(Order)} over {@code saveAndFlush(Object)}) inherits the erased one too, which
     * reaches the same method and would be checked and named twice.
     */
    private static List<Method> userMethods(Class<?> userType) {
        Method[] methods = ReflectionUtils.getUniqueDeclaredMethods(userType, ReflectionUtils.USER_DECLARED_METHODS);
        Set<Method> seen = new HashSet<>();
        List<Method> unique = new ArrayList<>(methods.length);
        for (Method method : methods) {
            Method specific =
                    BridgeMethodResolver.findBridgedMethod(ClassUtils.getMostSpecificMethod(method, userType));
            if (seen.add(specific)) {
                unique.add(method);
            }
        }
        return unique;
    }

    /** {@code method}'s fence point; {@code null} when it cannot be built ({@link #check} reports why). */
    private FencePoint point(Method method, Class<?> userType) {
        try {
            return support.points().pointFor(method, userType);
        } catch (FencingConfigurationException e) {
            return null;
        }
    }


    /**
     * The user's types behind a bean: its (ultimate target) class, and for a JDK proxy the interfaces it implements
     * that this class does not; for a {@code FactoryBean} or a bean not created yet, its predicted type (the
     * product type: {@code getObjectType()} or the definition's resolved type), or that proxy type's interfaces.
     */
    private List<Class<?>> typesToCheck(String name, Object singleton) {
        if (singleton != null) {
            return typesOf(singleton);
        }
        List<Class<?>> types = new ArrayList<>();
        Class<?> type = beanFactory.getType(name, false);
        if (type == null) {
            return types;
        }
        if (Proxy.isProxyClass(type)) {
            addUserInterfaces(type, null, types);
        } else {
            types.add(ClassUtils.getUserClass(type));
        }
        return types;
    }

    /** The user's types behind {@code bean}: its (ultimate target) class, and a JDK proxy's interfaces. */
    private static List<Class<?>> typesOf(Object bean) {
        List<Class<?>> types = new ArrayList<>();
        Class<?> target = AopProxyUtils.ultimateTargetClass(bean);
        Class<?> checkedClass = Proxy.isProxyClass(target) ? null : target;
        if (checkedClass != null) {
            types.add(checkedClass);
        }
        if (Proxy.isProxyClass(bean.getClass())) {
            addUserInterfaces(bean.getClass(), checkedClass, types);
        }
        return types;
    }

    /** The proxy's interfaces but Spring's own, and but those {@code checkedClass} (when not null) implements. */
    private static void addUserInterfaces(Class<?> proxyClass, Class<?> checkedClass, List<Class<?>> types) {
        for (Class<?> iface : proxyClass.getInterfaces()) {
            if (iface != SpringProxy.class && iface != Advised.class && iface != DecoratingProxy.class
                    && (checkedClass == null || !iface.isAssignableFrom(checkedClass))) {
                types.add(iface);
            }
        }
    }

    private void check(String bean, Class<?> userClass, Method method, Object singleton, Integer transactionOrder,
                       Set<String> problems) {
        String operation = FencePointSource.describe(userClass, method);
        int modifiers = method.getModifiers();
        boolean annotatedHere = MergedAnnotations.from(method, SearchStrategy.DIRECT).isPresent(Fenced.class);
        if (Modifier.isStatic(modifiers)) {
            if (annotatedHere) {
                problems.add(operation + " is static; @Fenced applies to instance methods only");
            }
            return;
        }
        FencePointSource.Resolution found = support.resolutions().resolutionFor(method, userClass);
        if (found == null) {
            return;
        }
        boolean acquires;
        try {
            Object fence = support.points().fenceFor(method, userClass);
            if (!(fence instanceof FencePointSource.ReactivePoint)) {
                String noBlockingStore = support.blockingStoreProblem(operation);
                if (noBlockingStore != null) {
                    problems.add(noBlockingStore);
                    return;
                }
            }
            acquires = support.points().pointFor(method, userClass).acquire();
        } catch (FencingConfigurationException e) {
            problems.add(e.getMessage());
            return;
        }
        if (mode == AdviceMode.PROXY) {
            if (WovenClassCheck.isWoven(method)) {
                // the woven aspect refuses every call while PROXY mode is configured: fail now, not on the first call
                problems.add(operation + " was woven with FencingAspect, but fencing runs in PROXY mode, so every "
                        + "call of it would be refused; use @EnableFencing(mode = AdviceMode.ASPECTJ) (declared "
                        + "yourself, the starter's backs off), or stop weaving " + userClass.getName());
                return;
            }
            // an acquiring point checks nothing (its lock is held until the transaction completes, wherever it runs)
            checkProxy(bean, userClass, operation, method, modifiers, singleton, acquires ? null : transactionOrder,
                    problems);
            if (!acquires && transactionsPresent()) {
                Object proxy = singleton != null ? singleton : factoryProduct(bean, userClass);
                if (proxy != null) {
                    checkInnerTransaction(operation, method, userClass, proxy, problems);
                }
            }
        } else {
            WovenClassCheck.checkWoven(operation, method, userClass, found, problems);
        }
    }

    private void checkProxy(String bean, Class<?> userClass, String operation, Method method, int modifiers,
                            Object singleton, Integer transactionOrder, Set<String> problems) {
        if (Modifier.isPrivate(modifiers) || Modifier.isFinal(modifiers)) {
            problems.add(operation + " is " + (Modifier.isPrivate(modifiers) ? "private" : "final")
                    + ": Spring proxies cannot advise it, so it would run unfenced; make it public and non-final"
                    + (Modifier.isFinal(modifiers) ? KotlinHints.forFinalMethod(userClass) : "")
                    + ", or use @EnableFencing(mode = AdviceMode.ASPECTJ) with weaving");
            return;
        }
        if (singleton != null && AopUtils.isJdkDynamicProxy(singleton)
                && !onProxyInterface(singleton, method, userClass)) {
            problems.add(operation + " is not declared on any interface of bean '" + bean + "', which is a JDK "
                    + "interface proxy, so calls to it would run unfenced; declare it on the interface or use "
                    + "@EnableFencing(proxyTargetClass = true)");
        }
        if (singleton != null && AsyncMethods.isAsync(method, userClass) && AsyncMethods.fenceOutsideAsync(singleton)) {
            problems.add(operation + " is both @Async and @Fenced, but on bean '" + bean + "' the fence advisor runs "
                    + "before an asynchronous hand-off, so the write runs later on another thread, "
                    + "outside the check; keep one proxy per bean (do not proxy it for @Async yourself: "
                    + "@EnableAsync adds its advisor to the fenced proxy, ahead of the fence), or put @Fenced on "
                    + "the synchronous method the asynchronous body calls");
        }
        if (transactionOrder != null && isTransactional(method, userClass)
                && fenceOutsideTransaction(singleton, transactionOrder)) {
            problems.add(operation + " is both @Transactional and @Fenced, but the fence advisor (order " + order
                    + ") would run outside the transaction advisor (order " + transactionOrder
                    + (order == transactionOrder ? ", the same order, and the fence advisor comes first in the chain"
                    : "") + "); the check must "
                    + "run inside the transaction: set @EnableTransactionManagement(order = ...) lower than "
                    + "@EnableFencing(order = ...), e.g. @EnableTransactionManagement(order = 0)");
        }
    }

    /**
     * The object a singleton {@code FactoryBean} makes (a Spring Data repository's proxy), for a factory created by
     * now: the product it made (early, perhaps, before the auto-proxy creator existed) or, when none was asked for
     * yet, the one it makes now, post-processed in full. {@code null} for anything else (a factory not created, a lazy
     * one, stays so; a factory of prototypes makes a new object per call), for a product not of {@code userType}, or
     * when it cannot be had.
     */
    private Object factoryProduct(String bean, Class<?> userType) {
        try {
            // only a factory already made (a lazy one stays lazy): its product is made, or cheap to make, by now
            boolean made = beanFactory.containsSingleton(bean) && beanFactory.isFactoryBean(bean);
            Object product = made && beanFactory.isSingleton(bean) ? beanFactory.getBean(bean) : null;
            // a class found under the application's packages for a product known by its supertype need not be the
            // product's: another class's object says nothing of it
            return product != null && (userType.isInstance(product)
                    || userType.isAssignableFrom(AopProxyUtils.ultimateTargetClass(product))) ? product : null;
        } catch (RuntimeException unavailable) {
            return null;
        }
    }


    private boolean transactionsPresent() {
        return ClassUtils.isPresent(TRANSACTIONAL, beanFactory.getBeanClassLoader());
    }

    /**
     * A transaction interceptor inside the fence that begins a transaction of its own for the method, or suspends the
     * caller's (a Spring Data repository method's own {@code @Transactional(propagation = ...)}): the check would
     * commit with the caller's transaction, the write apart from it.
     */
    private static void checkInnerTransaction(String operation, Method method, Class<?> userClass, Object singleton,
                                              Set<String> problems) {
        String propagation = InnerTransactions.apartFromTheFence(singleton, method, userClass);
        if (propagation != null) {
            problems.add(operation + " is @Fenced, and its proxy's own transaction interceptor (a Spring Data "
                    + "repository's), which runs inside the fence, gives it propagation " + propagation + ": the "
                    + (propagation.equals("NEVER") ? "method would fail every call (the fence's transaction is "
                    + "there)" : "check would run in the caller's transaction and the write "
                    + (propagation.equals("REQUIRES_NEW") ? "in another one" : "outside any")
                    + ", so a rollback keeps the write and a write checked with an older token can commit after a "
                    + "newer one's") + "; drop the propagation from the repository method and put @Transactional "
                    + "on the service method that calls it");
        }
    }

    /**
     * Whether an interface of {@code proxy} declares {@code method}: by its signature, or as the method a generic
     * interface's method resolves to in the method's class ({@code write(Long)} for {@code write(ID)}, through the
     * compiler's bridge), which is how the proxy's call reaches it.
     */
    private static boolean onProxyInterface(Object proxy, Method method, Class<?> userClass) {
        for (Class<?> iface : proxy.getClass().getInterfaces()) {
            if (ClassUtils.hasMethod(iface, method.getName(), method.getParameterTypes())) {
                return true;
            }
            for (Method declared : iface.getMethods()) {
                if (declared.getName().equals(method.getName())
                        && declared.getParameterCount() == method.getParameterCount()
                        && (BridgeMethodResolver.findBridgedMethod(ClassUtils.getMostSpecificMethod(declared,
                        method.getDeclaringClass())).equals(method)
                        // a generic superclass's go(T) behind the bean's own interface's go(Thing)
                        || AopUtils.getMostSpecificMethod(declared, userClass).equals(method))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Whether the fence would run outside the transaction. A proxy already made answers by its advisor chain; else
     * the orders decide, and equal orders (Spring Boot's transaction advisor and the fence advisor both default to
     * the lowest precedence) keep the order in which the advisor beans were registered, as the auto-proxy creators
     * sort them.
     */
    private boolean fenceOutsideTransaction(Object singleton, int transactionOrder) {
        if (singleton instanceof Advised advised) {
            int transaction = -1;
            int fence = -1;
            Advisor[] chain = advised.getAdvisors();
            for (int i = 0; i < chain.length; i++) {
                if (transaction < 0 && chain[i].getClass().getName().equals(TRANSACTION_ADVISOR)) {
                    transaction = i;
                } else if (fence < 0 && chain[i] instanceof FencingAdvisor advisor && !advisor.acquiring()) {
                    fence = i;
                }
            }
            if (transaction >= 0 && fence >= 0) {
                return fence < transaction;
            }
        }
        if (order != transactionOrder) {
            return order < transactionOrder;
        }
        int transaction = -1;
        int fence = -1;
        String[] advisors = beanFactory.getBeanNamesForType(Advisor.class, true, false);
        for (int i = 0; i < advisors.length; i++) {
            Class<?> type = beanFactory.getType(advisors[i], false);
            if (type == null) {
                continue;
            }
            if (transaction < 0 && type.getName().equals(TRANSACTION_ADVISOR)) {
                transaction = i;
            } else if (fence < 0 && FencingAdvisor.class.isAssignableFrom(type)
                    && !advisors[i].equals(ProxyFencingConfiguration.ACQUIRE_ADVISOR)) {
                fence = i;
            }
        }
        return transaction < 0 || fence < 0 || fence < transaction;
    }

    private static boolean isTransactional(Method method, Class<?> userClass) {
        return MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(TRANSACTIONAL)
                || MergedAnnotations.from(userClass, SearchStrategy.TYPE_HIERARCHY).isPresent(TRANSACTIONAL);
    }

    private Integer transactionAdvisorOrder() {
        if (mode != AdviceMode.PROXY || !ClassUtils.isPresent(TRANSACTIONAL, beanFactory.getBeanClassLoader())) {
            return null;
        }
        List<Integer> orders = new ArrayList<>();
        beanFactory.getBeansOfType(Advisor.class, false, false).values().forEach(advisor -> {
            if (advisor.getClass().getName().equals(TRANSACTION_ADVISOR)) {
                orders.add(advisor instanceof Ordered ordered ? ordered.getOrder() : Ordered.LOWEST_PRECEDENCE);
            }
        });
        return orders.stream().max(Integer::compare).orElse(null);
    }

    /**
     * The declared resource that Spring Boot binds as {@code key} from {@code fencing.modes.<resource>} written
     * without brackets, which keeps only ASCII letters, digits, '-' and '_' of a map key ({@code order lines} becomes
     * {@code orderlines}, {@code café} {@code caf}); {@code null} when none does.
     */
    static String unbracketed(String key, Set<String> declared) {
        for (String resource : declared) {
            if (!resource.equals(key) && resource.replaceAll("[^A-Za-z0-9_-]", "").equals(key)) {
                return resource;
            }
        }
        return null;
    }
}
