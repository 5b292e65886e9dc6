package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.web.UnadmittedTokenInterceptor;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.handler.AbstractHandlerMapping;
import org.springframework.web.servlet.handler.MappedInterceptor;

import java.util.ArrayList;
import java.util.List;

/**
 * Whether Spring MVC's handler mappings of annotated controllers and router functions (the beans
 * {@code WebMvcConfigurationSupport} defines) run {@link UnadmittedTokenInterceptor}: one that does not (its interceptors
 * configured by a {@code WebMvcConfigurationSupport} subclass that ignores {@code WebMvcConfigurer} beans) fails
 * startup, naming the mapping and how to add the interceptor. Other libraries' mappings (the actuator's) are not read.
 */
final class UnadmittedTokenInterceptorCheck {

    /** The mappings {@code WebMvcConfigurationSupport} defines for controllers and router functions. */
    private static final List<String> MAPPINGS = List.of("requestMappingHandlerMapping", "routerFunctionMapping");

    private UnadmittedTokenInterceptorCheck() {
    }

    static void verify(ListableBeanFactory beans) {
        List<String> without = new ArrayList<>();
        for (String name : MAPPINGS) {
            if (beans.containsBean(name) && beans.isTypeMatch(name, AbstractHandlerMapping.class)
                    && !runsTheInterceptor(beans.getBean(name, AbstractHandlerMapping.class))) {
                without.add("'" + name + "'");
            }
        }
        if (!without.isEmpty()) {
            throw new FencingConfigurationException("Spring MVC's handler "
                    + (without.size() == 1 ? "mapping " : "mappings ") + String.join(" and ", without)
                    + (without.size() == 1 ? " does" : " do") + " not run fencing's UnadmittedTokenInterceptor, which refuses (403) a Fencing-Token header "
                    + "that no token filter admitted: without it such a header is ignored, and a @Fenced(acquire = "
                    + "true) method writes the request (perhaps a zombie's) under a lock of its own. A "
                    + "WebMvcConfigurationSupport subclass of the application ignores WebMvcConfigurer beans: extend "
                    + "DelegatingWebMvcConfiguration instead, or in its addInterceptors(registry) call "
                    + "getApplicationContext().getBean(\"fencingUnadmittedTokenInterceptor\", WebMvcConfigurer.class)"
                    + ".addInterceptors(registry)");
        }
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
