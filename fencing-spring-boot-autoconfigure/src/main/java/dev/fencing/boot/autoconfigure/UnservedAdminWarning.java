package dev.fencing.boot.autoconfigure;

import dev.fencing.store.FenceStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Warns at startup when {@code fencing.admin.enabled=true} asks for the admin operations (the mode switch, the reset,
 * the floor raise) and the application serves none, naming why: the actuator is not on the class path, there is no
 * blocking {@code FenceStore} to administer, or the {@code fencing} endpoint is not available (not exposed, or
 * turned off). Nothing is unsafe then, only missing; an endpoint of limited access is warned of where it is built.
 */
final class UnservedAdminWarning implements SmartInitializingSingleton {

    static final String ENDPOINT = "org.springframework.boot.actuate.endpoint.annotation.Endpoint";
    static final String EXTENSION = "dev.fencing.boot.actuate.FencingAdminWebExtension";

    private static final Log log = LogFactory.getLog(UnservedAdminWarning.class);

    private final ConfigurableListableBeanFactory beans;
    private final Environment environment;

    UnservedAdminWarning(ConfigurableListableBeanFactory beans, Environment environment) {
        this.beans = beans;
        this.environment = environment;
    }

    @Override
    public void afterSingletonsInstantiated() {
        String why = unserved();
        if (why != null) {
            log.warn("fencing.admin.enabled=true, but " + why);
        }
    }

    private static final String NONE_SERVED = ": the admin operations (the mode switch, the reset, the floor raise) "
            + "are not served";

    /** Why admin operations asked for are not served, and which; {@code null} when served or not asked for. */
    String unserved() {
        if (!environment.getProperty("fencing.admin.enabled", Boolean.class, false)) {
            return null;
        }
        ClassLoader loader = beans.getBeanClassLoader();
        if (!ClassUtils.isPresent(ENDPOINT, loader)) {
            return "Spring Boot's actuator is not on the class path (add spring-boot-starter-actuator)" + NONE_SERVED;
        }
        if ("none".equalsIgnoreCase(environment.getProperty("spring.main.web-application-type", "").strip())) {
            return "spring.main.web-application-type=none: no web server serves the actuator's web endpoints"
                    + NONE_SERVED;
        }
        if ("-1".equals(environment.getProperty("management.server.port", "").strip())) {
            return "management.server.port=-1 turns the actuator's web endpoints off" + NONE_SERVED;
        }
        if (beans.getBeanNamesForType(ClassUtils.resolveClassName(EXTENSION, loader), true, false).length > 0) {
            return null;
        }
        if (beans.getBeanNamesForType(FenceStore.class, true, false).length == 0) {
            return "the application has no blocking FenceStore bean to administer: the reset and the floor raise "
                    + "are not served (a reactive store has none; the mode switch is served)";
        }
        return "the fencing endpoint is not available (expose it: management.endpoints.web.exposure.include=...,"
                + "fencing; and keep management.endpoint.fencing.access or .enabled from turning it off)" + NONE_SERVED;
    }
}
