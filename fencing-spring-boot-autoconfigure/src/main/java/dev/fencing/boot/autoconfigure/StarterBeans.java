package dev.fencing.boot.autoconfigure;

import org.springframework.beans.factory.annotation.AnnotatedBeanDefinition;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * Which beans the starter made, for the startup checks that speak of the application's own beans. Free of any
 * integration module's classes, so that every auto-configuration may ask it.
 */
final class StarterBeans {

    private StarterBeans() {
    }

    /**
     * Whether bean {@code name} is made by a factory method of the starter: read from the method's metadata, or, in
     * an AOT-processed application (whose definitions carry none), from the class of its factory bean.
     */
    static boolean madeByStarter(ConfigurableListableBeanFactory beanFactory, String name) {
        if (!beanFactory.containsBeanDefinition(name)) {
            return false;
        }
        BeanDefinition definition = beanFactory.getBeanDefinition(name);
        String declaring = null;
        if (definition instanceof AnnotatedBeanDefinition annotated && annotated.getFactoryMethodMetadata() != null) {
            declaring = annotated.getFactoryMethodMetadata().getDeclaringClassName();
        } else if (definition.getFactoryBeanName() != null) {
            Class<?> factory = beanFactory.getType(definition.getFactoryBeanName(), false);
            declaring = factory == null ? definition.getFactoryBeanName() : ClassUtils.getUserClass(factory).getName();
        }
        return declaring != null && declaring.startsWith("dev.fencing.boot.autoconfigure.");
    }
}
