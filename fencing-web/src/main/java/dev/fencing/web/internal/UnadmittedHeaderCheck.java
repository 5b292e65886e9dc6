package dev.fencing.web.internal;

import dev.fencing.spring.FencingStartupCheck;
import dev.fencing.web.UnadmittedTokenInterceptor;
import dev.fencing.web.reactive.FencingTokenWebFilter;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.handler.AbstractHandlerMapping;
import org.springframework.web.servlet.handler.MappedInterceptor;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code @EnableFencing}'s startup check (loaded from {@code META-INF/spring.factories}, with or without Spring Boot)
 * that a web application refuses a {@code Fencing-Token} header no token filter admitted: ignored, its token (perhaps
 * a zombie's) would be set aside unseen by a {@code @Fenced(acquire = true)} method, which takes a lock of its own and
 * writes the request. In Spring MVC, each handler mapping of annotated controllers and router functions (the beans
 * {@code WebMvcConfigurationSupport} defines; other libraries' mappings, the actuator's, are not read) must run
 * {@link UnadmittedTokenInterceptor}; in WebFlux (with fencing-reactor, which the filter needs), a
 * {@link FencingTokenWebFilter} bean must be there, one that trusts no path refusing the header everywhere. The
 * starter registers both; the problem says how to add them by hand.
 */
final class UnadmittedHeaderCheck implements FencingStartupCheck {

    private static final String MVC = "org.springframework.web.servlet.handler.AbstractHandlerMapping";
    private static final String WEBFLUX = "org.springframework.web.reactive.DispatcherHandler";
    private static final String REACTOR_FENCING = "dev.fencing.reactive.ReactiveFencing";

    /** The starter's {@code WebMvcConfigurer} that registers the interceptor. */
    static final String STARTER_INTERCEPTOR = "fencingUnadmittedTokenInterceptor";

    @Override
    public String problem(ListableBeanFactory beans, Environment environment) {
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
            for (String name : MAPPINGS) {
                if (beans.containsBean(name) && beans.isTypeMatch(name, AbstractHandlerMapping.class)
                        && !runsTheInterceptor(beans.getBean(name, AbstractHandlerMapping.class))) {
                    without.add("'" + name + "'");
                }
            }
            if (without.isEmpty()) {
                return null;
            }
            String fix = beans.containsBean(STARTER_INTERCEPTOR)
                    // the starter registered it as a WebMvcConfigurer, which a WebMvcConfigurationSupport ignores
                    ? "A WebMvcConfigurationSupport subclass of the application ignores WebMvcConfigurer beans: extend "
                    + "DelegatingWebMvcConfiguration instead, or in its addInterceptors(registry) call "
                    + "getApplicationContext().getBean(\"" + STARTER_INTERCEPTOR + "\", WebMvcConfigurer.class)"
                    + ".addInterceptors(registry)"
                    : "Register it: in a WebMvcConfigurer of the application (with @EnableWebMvc), "
                    + "addInterceptors(registry) { registry.addInterceptor(new UnadmittedTokenInterceptor("
                    + "\"this application accepts it on no path\")); } (with a FencingTokenFilter, "
                    + "new UnadmittedTokenInterceptor(where, itsUrlPatterns)), or declare a bean "
                    + "new MappedInterceptor(null, new UnadmittedTokenInterceptor(..)); see docs/propagation.md";
            return "Spring MVC's handler " + (without.size() == 1 ? "mapping " : "mappings ")
                    + String.join(" and ", without) + (without.size() == 1 ? " does" : " do")
                    + " not run fencing's UnadmittedTokenInterceptor, which refuses (403) a Fencing-Token header "
                    + "that no token filter admitted: without it such a header is ignored, and a @Fenced(acquire = "
                    + "true) method writes the request (perhaps a zombie's) under a lock of its own. " + fix;
        }

        private static boolean runsTheInterceptor(AbstractHandlerMapping handlers) {
            for (HandlerInterceptor interceptor : handlers.getAdaptedInterceptors()) {
                HandlerInterceptor inner = interceptor instanceof MappedInterceptor mapped ? mapped.getInterceptor()
                        : interceptor;
                if (inner instanceof UnadmittedTokenInterceptor) {
                    return true;
                }
            }
            return false;
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
