package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.attribute.FencingSupport;
import dev.fencing.guard.FenceGuard;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportAware;
import org.springframework.context.annotation.Role;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.type.AnnotationMetadata;

import java.time.Duration;

/**
 * Beans both modes share: the {@link FencingSupport} (guard, fence points, counters) and the startup validator.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public abstract class AbstractFencingConfiguration implements ImportAware {

    private static final Log log = LogFactory.getLog(AbstractFencingConfiguration.class);

    protected AnnotationAttributes enableFencing;

    @Override
    public void setImportMetadata(AnnotationMetadata importMetadata) {
        this.enableFencing = AnnotationAttributes.fromMap(
                importMetadata.getAnnotationAttributes(EnableFencing.class.getName()));
        if (enableFencing == null) {
            throw new FencingConfigurationException("@EnableFencing is not present on importing class "
                    + importMetadata.getClassName());
        }
    }

    @Bean(name = "dev.fencing.internalFencingSupport")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public FencingSupport fencingSupport(ObjectProvider<FenceStore> store, ObjectProvider<TokenIssuer> issuer,
                                         ObjectProvider<MeterRegistry> registry) {
        long timeoutMillis = enableFencing.getNumber("acquireTimeoutMillis").longValue();
        if (timeoutMillis < 0) {
            throw new FencingConfigurationException("@EnableFencing(acquireTimeoutMillis = " + timeoutMillis
                    + ") must not be negative");
        }
        FenceStore fenceStore = store.getIfAvailable(() -> {
            log.warn("No FenceStore bean found: using an InMemoryFenceStore, which fences writes made inside this "
                    + "JVM only. Define a FenceStore bean (e.g. the JDBC store) for resources shared by several instances.");
            return new InMemoryFenceStore();
        });
        FenceGuard guard = new FenceGuard(fenceStore, issuer.getIfAvailable(), Duration.ofMillis(timeoutMillis));
        MeterRegistry meters = registry.getIfAvailable();
        return new FencingSupport(guard, meters == null ? FencingMetrics.noop() : new FencingMetrics(meters));
    }

    @Bean(name = "dev.fencing.internalFencingStartupValidator")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public FencingStartupValidator fencingStartupValidator(FencingSupport fencingSupport) {
        return new FencingStartupValidator(fencingSupport, enableFencing.getEnum("mode"),
                enableFencing.getNumber("order").intValue());
    }

    /** The mode this configuration serves. */
    protected AdviceMode mode() {
        return enableFencing.getEnum("mode");
    }
}
