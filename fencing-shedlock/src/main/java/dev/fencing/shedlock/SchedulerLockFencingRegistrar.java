package dev.fencing.shedlock;

import dev.fencing.FencingConfigurationException;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConstructorArgumentValues;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.type.AnnotationMetadata;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Registers the {@link LockProviderFencer} with the attributes of {@link EnableSchedulerLockFencing}. The annotation on
 * several configuration classes (one per module of an application) registers one fencer with all their mappings, only
 * mapped names allowed when any of them says so; two different acquire timeouts fail startup.
 */
final class SchedulerLockFencingRegistrar implements ImportBeanDefinitionRegistrar {

    static final String BEAN_NAME = "dev.fencing.shedlock.lockProviderFencer";

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        AnnotationAttributes attributes = AnnotationAttributes.fromMap(
                metadata.getAnnotationAttributes(EnableSchedulerLockFencing.class.getName()));
        if (attributes == null) {
            return;
        }
        String[] resources = attributes.getStringArray("resources");
        boolean mappedOnly = attributes.getBoolean("mappedOnly");
        String acquireTimeout = attributes.getString("acquireTimeout");
        if (registry.containsBeanDefinition(BEAN_NAME)) {
            // another @EnableSchedulerLockFencing: its mappings used to be dropped without a word, merged now
            ConstructorArgumentValues earlier = registry.getBeanDefinition(BEAN_NAME).getConstructorArgumentValues();
            String earlierTimeout = (String) earlier.getIndexedArgumentValues().get(2).getValue();
            if (!acquireTimeout.equals(earlierTimeout)) {
                throw new FencingConfigurationException("@EnableSchedulerLockFencing is declared more than once, with "
                        + "acquireTimeout \"" + earlierTimeout + "\" and \"" + acquireTimeout + "\" (on "
                        + metadata.getClassName() + "): one fencer wraps every LockProvider, give them one timeout");
            }
            Set<String> merged = new LinkedHashSet<>(
                    Arrays.asList((String[]) earlier.getIndexedArgumentValues().get(0).getValue()));
            merged.addAll(Arrays.asList(resources));
            earlier.addIndexedArgumentValue(0, merged.toArray(String[]::new));
            boolean earlierMappedOnly = (Boolean) earlier.getIndexedArgumentValues().get(1).getValue();
            earlier.addIndexedArgumentValue(1, mappedOnly || earlierMappedOnly);
            return;
        }
        RootBeanDefinition definition = new RootBeanDefinition(LockProviderFencer.class);
        definition.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
        definition.getConstructorArgumentValues().addIndexedArgumentValue(0, resources);
        definition.getConstructorArgumentValues().addIndexedArgumentValue(1, mappedOnly);
        definition.getConstructorArgumentValues().addIndexedArgumentValue(2, acquireTimeout);
        registry.registerBeanDefinition(BEAN_NAME, definition);
    }
}
