package dev.fencing.shedlock;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.type.AnnotationMetadata;

/** Registers the {@link LockProviderFencer} with the attributes of {@link EnableSchedulerLockFencing}. */
final class SchedulerLockFencingRegistrar implements ImportBeanDefinitionRegistrar {

    static final String BEAN_NAME = "dev.fencing.shedlock.lockProviderFencer";

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        AnnotationAttributes attributes = AnnotationAttributes.fromMap(
                metadata.getAnnotationAttributes(EnableSchedulerLockFencing.class.getName()));
        if (attributes == null || registry.containsBeanDefinition(BEAN_NAME)) {
            return;
        }
        RootBeanDefinition definition = new RootBeanDefinition(LockProviderFencer.class);
        definition.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
        definition.getConstructorArgumentValues().addIndexedArgumentValue(0, attributes.getStringArray("resources"));
        definition.getConstructorArgumentValues().addIndexedArgumentValue(1, attributes.getBoolean("mappedOnly"));
        definition.getConstructorArgumentValues().addIndexedArgumentValue(2, attributes.getString("acquireTimeout"));
        registry.registerBeanDefinition(BEAN_NAME, definition);
    }
}
