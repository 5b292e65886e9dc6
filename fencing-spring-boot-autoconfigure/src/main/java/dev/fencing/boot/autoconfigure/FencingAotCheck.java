package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import org.springframework.aot.AotDetector;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.ConfigurationPropertyState;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertySource;

import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Fails the start of an AOT-processed application ({@code -Dspring.aot.enabled=true}) whose {@code fencing.*}
 * properties decide otherwise than those it was built with: AOT processing fixed the starter's conditions at build
 * time, so a property set only where the application runs (signing keys, the store or issuer type, the offset, ...)
 * would otherwise be ignored without a word, and signatures go unchecked or a zombie's write land. Runs after the
 * generated initializer, which registers the build's {@link FencingAotDecisions}. Registered in
 * {@code META-INF/spring.factories}; does nothing in an application that is not AOT-processed.
 */
public class FencingAotCheck implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    private final BooleanSupplier aotProcessed;

    /** The check Spring Boot instantiates: it runs when {@link AotDetector#useGeneratedArtifacts()} says so. */
    public FencingAotCheck() {
        this(AotDetector::useGeneratedArtifacts);
    }

    FencingAotCheck(BooleanSupplier aotProcessed) {
        this.aotProcessed = aotProcessed;
    }

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        if (!aotProcessed.getAsBoolean()) {
            return;
        }
        ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
        if (!(beanFactory.containsSingleton(FencingAotDecisions.BEAN)
                && beanFactory.getSingleton(FencingAotDecisions.BEAN) instanceof FencingAotDecisions built)) {
            throw new FencingConfigurationException("This application runs AOT-processed (spring.aot.enabled=true), "
                    + "but its build recorded no fencing decisions: it was processed with another version of fencing, "
                    + "or without it. Run the AOT processing again with this version (spring-boot:process-aot), so "
                    + "that fencing can check that the properties it runs with are those it was built with.");
        }
        ConfigurableEnvironment environment = context.getEnvironment();
        check(built.decisions(), FencingAotDecisions.of(environment), decision -> origin(environment, decision));
    }

    /** Refuses decisions of the run that differ from the build's, naming each and the fix. */
    static void check(Map<String, String> built, Map<String, String> now) {
        check(built, now, decision -> null);
    }

    private static void check(Map<String, String> built, Map<String, String> now, Function<String, String> origin) {
        List<String> differences = FencingAotDecisions.differences(built, now, origin);
        if (differences.isEmpty()) {
            return;
        }
        throw new FencingConfigurationException("This application runs AOT-processed (spring.aot.enabled=true), and "
                + "AOT processing fixed fencing's configuration when it was built; the properties it runs with "
                + "decide otherwise, and would be ignored: " + String.join("; ", differences) + ". Build it with "
                + "the same fencing properties it runs with (application.properties, or the environment of "
                + "spring-boot:process-aot; secrets can stay placeholders such as ${FENCING_KEY}, resolved where it "
                + "runs), or run it as built.");
    }

    /**
     * The name of the first property source that sets what {@code decision} was read from (an environment variable,
     * the command line, a profile's file), in any of the forms Boot binds (relaxed names, indexed entries), else
     * {@code null}.
     */
    private static String origin(ConfigurableEnvironment environment, String decision) {
        String property = decision.startsWith("fencing.signing") ? "fencing.signing" : decision;
        if (!ConfigurationPropertyName.isValid(property)) {
            return null;
        }
        ConfigurationPropertyName name = ConfigurationPropertyName.of(property);
        for (PropertySource<?> source : environment.getPropertySources()) {
            // Boot's attached source repeats every other one under its own name
            if (ConfigurationPropertySources.isAttachedConfigurationPropertySource(source)) {
                continue;
            }
            for (ConfigurationPropertySource properties : ConfigurationPropertySources.from(source)) {
                if (properties.getConfigurationProperty(name) != null
                        || properties.containsDescendantOf(name) == ConfigurationPropertyState.PRESENT) {
                    return source.getName();
                }
            }
        }
        return null;
    }
}
