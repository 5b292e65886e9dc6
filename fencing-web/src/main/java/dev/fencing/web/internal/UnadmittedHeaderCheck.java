package dev.fencing.web.internal;

import dev.fencing.web.UnadmittedTokenInterceptor;
import dev.fencing.web.reactive.FencingTokenWebFilter;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.web.context.WebApplicationContext;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.handler.AbstractHandlerMapping;
import org.springframework.web.servlet.handler.MappedInterceptor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiFunction;

/**
 * {@code @EnableFencing}'s startup check (listed in {@code META-INF/fencing/startup-checks.factories}, with or
 * without Spring Boot; a {@code BiFunction} answering the problem or {@code null}, so that this module imports no
 * type of the Spring glue)
 * that a web application refuses a {@code Fencing-Token} header no token filter admitted: ignored, its token (perhaps
 * a zombie's) would be set aside unseen by a {@code @Fenced(acquire = true)} method, which takes a lock of its own and
 * writes the request. In Spring MVC, each handler mapping of annotated controllers and router functions (the beans
 * {@code WebMvcConfigurationSupport} defines; other libraries' mappings, the actuator's, are not read) must run
 * {@link UnadmittedTokenInterceptor}; in WebFlux (with fencing-reactor, which the filter needs), a
 * {@link FencingTokenWebFilter} bean must be there, one that trusts no path refusing the header everywhere. The
 * starter registers both; the problem says how to add them by hand.
 */
final class UnadmittedHeaderCheck implements BiFunction<ListableBeanFactory, Environment, String> {

    private static final String MVC = "org.springframework.web.servlet.handler.AbstractHandlerMapping";
    private static final String WEBFLUX = "org.springframework.web.reactive.DispatcherHandler";
    private static final String REACTOR_FENCING = "dev.fencing.reactive.ReactiveFencing";

    /** The starter's {@code WebMvcConfigurer} that registers the interceptor. */
    static final String STARTER_INTERCEPTOR = "fencingUnadmittedTokenInterceptor";

    @Override
    public String apply(ListableBeanFactory beans, Environment environment) {
        ClassLoader loader = beans instanceof org.springframework.beans.factory.config.ConfigurableBeanFactory factory
                ? factory.getBeanClassLoader() : getClass().getClassLoader();
        List<String> problems = new ArrayList<>(2);
        if (ClassUtils.isPresent(MVC, loader)) {
            String mvc = SpringMvc.problem(beans);
            if (mvc != null) {
                problems.add(mvc);
            }
        }
        if (ClassUtils.isPresent(WEBFLUX, loader) && ClassUtils.isPresent(REACTOR_FENCING, loader)) {
            String webFlux = WebFlux.problem(beans);
            if (webFlux != null) {
                problems.add(webFlux);
            }
        }
        return problems.isEmpty() ? null : String.join("\n  - ", problems);
    }

    /** Apart, so that an application without Spring MVC never loads its classes. */
    static final class SpringMvc {

        /** The mappings {@code WebMvcConfigurationSupport} defines for controllers and router functions. */
        private static final List<String> MAPPINGS = List.of("requestMappingHandlerMapping", "routerFunctionMapping");

        private SpringMvc() {
        }

        static String problem(ListableBeanFactory beans) {
            List<String> without = new ArrayList<>();
            List<String> partly = new ArrayList<>();
            boolean mappings = false;
            for (String name : MAPPINGS) {
                if (beans.containsBean(name) && beans.isTypeMatch(name, AbstractHandlerMapping.class)) {
                    mappings = true;
                    HandlerInterceptor[] interceptors = beans.getBean(name, AbstractHandlerMapping.class)
                            .getAdaptedInterceptors();
                    if (!runsOnEveryPath(interceptors)) {
                        (runsAtAll(interceptors) ? partly : without).add("'" + name + "'");
                    }
                }
            }
            if (!mappings) {
                return defaultMappingsProblem(beans);
            }
            if (without.isEmpty() && partly.isEmpty()) {
                return null;
            }
            String fix = beans.containsBean(STARTER_INTERCEPTOR) && partly.isEmpty()
                    // the starter registered it as a WebMvcConfigurer, which a WebMvcConfigurationSupport ignores
                    ? "A WebMvcConfigurationSupport subclass of the application ignores WebMvcConfigurer beans: extend "
                    + "DelegatingWebMvcConfiguration instead, or in its addInterceptors(registry) call "
                    + "getApplicationContext().getBean(\"" + STARTER_INTERCEPTOR + "\", WebMvcConfigurer.class)"
                    + ".addInterceptors(registry)"
                    : "Register it on every path (no addPathPatterns or excludePathPatterns: it refuses only headers "
                    + "no filter admitted): in a WebMvcConfigurer of the application (with @EnableWebMvc), "
                    + "addInterceptors(registry) { registry.addInterceptor(new UnadmittedTokenInterceptor("
                    + "\"this application accepts it on no path\")); } (with a FencingTokenFilter, "
                    + "new UnadmittedTokenInterceptor(where, itsUrlPatterns)), or declare a bean "
                    + "new MappedInterceptor(null, new UnadmittedTokenInterceptor(..)); see docs/propagation.md";
            List<String> said = new ArrayList<>(2);
            if (!without.isEmpty()) {
                said.add("Spring MVC's handler " + (without.size() == 1 ? "mapping " : "mappings ")
                        + String.join(" and ", without) + (without.size() == 1 ? " does" : " do")
                        + " not run fencing's UnadmittedTokenInterceptor");
            }
            if (!partly.isEmpty()) {
                said.add("Spring MVC's handler " + (partly.size() == 1 ? "mapping " : "mappings ")
                        + String.join(" and ", partly) + " run" + (partly.size() == 1 ? "s" : "")
                        + " fencing's UnadmittedTokenInterceptor on some paths only (include or exclude patterns)");
            }
            return String.join("; ", said) + ": it refuses (403) a Fencing-Token header that no token filter "
                    + "admitted; without it such a header is ignored, and a @Fenced(acquire = true) method writes the "
                    + "request (perhaps a zombie's) under a lock of its own. " + fix;
        }

        /**
         * An application with controllers or router functions but none of the mapping beans: the
         * {@code DispatcherServlet} serves them through its default handler mappings (no {@code @EnableWebMvc}),
         * which are no beans and read only {@code MappedInterceptor} beans. Checked in a servlet application context
         * only (a {@code servletContext} bean): another context with such beans serves no request.
         */
        private static String defaultMappingsProblem(ListableBeanFactory beans) {
            if (!beans.containsBean(WebApplicationContext.SERVLET_CONTEXT_BEAN_NAME)
                    || beans.getBeanNamesForAnnotation(Controller.class).length == 0
                    && beans.getBeanNamesForType(RouterFunction.class, false, false).length == 0) {
                return null;
            }
            for (MappedInterceptor mapped : beans.getBeansOfType(MappedInterceptor.class, false, false).values()) {
                if (mapped.getInterceptor() instanceof UnadmittedTokenInterceptor && onEveryPath(mapped)) {
                    return null;
                }
            }
            return "This Spring MVC application's controllers are served by the DispatcherServlet's default handler "
                    + "mappings (no @EnableWebMvc), and no MappedInterceptor bean runs fencing's "
                    + "UnadmittedTokenInterceptor on every path: a Fencing-Token header no token filter admitted "
                    + "is then ignored, and a @Fenced(acquire = true) method writes the request (perhaps a zombie's) "
                    + "under a lock of its own. Declare a bean new MappedInterceptor(null, new "
                    + "UnadmittedTokenInterceptor(\"this application accepts it on no path\")) (a WebMvcConfigurer "
                    + "does nothing without @EnableWebMvc); see docs/propagation.md";
        }

        private static boolean runsAtAll(HandlerInterceptor[] interceptors) {
            for (HandlerInterceptor interceptor : interceptors) {
                HandlerInterceptor inner = interceptor instanceof MappedInterceptor mapped ? mapped.getInterceptor()
                        : interceptor;
                if (inner instanceof UnadmittedTokenInterceptor) {
                    return true;
                }
            }
            return false;
        }

        private static boolean runsOnEveryPath(HandlerInterceptor[] interceptors) {
            for (HandlerInterceptor interceptor : interceptors) {
                if (interceptor instanceof UnadmittedTokenInterceptor
                        || interceptor instanceof MappedInterceptor mapped
                        && mapped.getInterceptor() instanceof UnadmittedTokenInterceptor && onEveryPath(mapped)) {
                    return true;
                }
            }
            return false;
        }

        /** No exclude pattern, and no include pattern or one that matches every path. */
        private static boolean onEveryPath(MappedInterceptor mapped) {
            String[] includes = mapped.getIncludePathPatterns();
            String[] excludes = mapped.getExcludePathPatterns();
            return (excludes == null || excludes.length == 0)
                    && (includes == null || includes.length == 0 || Arrays.asList(includes).contains("/**"));
        }
    }

    /** Apart, so that an application without WebFlux never loads its classes. */
    static final class WebFlux {

        private WebFlux() {
        }

        static String problem(ListableBeanFactory beans) {
            if (beans.getBeanNamesForType(org.springframework.web.reactive.DispatcherHandler.class, false, false)
                    .length == 0
                    || beans.getBeanNamesForType(FencingTokenWebFilter.class, false, false).length > 0) {
                return null;
            }
            return "This WebFlux application has no FencingTokenWebFilter bean, so a Fencing-Token header is neither "
                    + "admitted nor refused: it is ignored, and a @Fenced(acquire = true) method writes the request "
                    + "(perhaps a zombie's) under a lock of its own. Declare one: @Bean FencingTokenWebFilter "
                    + "fencingTokenWebFilter() { return new FencingTokenWebFilter(exchange -> false); } refuses the "
                    + "header (403) on every path; FencingTokenWebFilter.forPaths(..) admits it where callers are "
                    + "trusted and refuses it elsewhere; see docs/propagation.md";
        }
    }
}
