package dev.fencing.spring.support;

import dev.fencing.spring.support.declared.ScannedFixtures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.ComponentScan;

import static org.assertj.core.api.Assertions.assertThat;

/** How ASPECTJ mode's startup check learns the resources of woven classes that are not beans. */
@Timeout(30)
class DeclaredResourcesTest {

    @ComponentScan(basePackageClasses = ScannedFixtures.class)
    static class ScansByClass {
    }

    @ComponentScan
    static class ScansItsOwnPackage {
    }

    @Test
    void everyFencedTypeAndMethodUnderAPackageIsReadWithoutLoadingItsClass() {
        assertThat(DeclaredResources.scan(java.util.Set.of("dev.fencing.spring.support.declared"),
                getClass().getClassLoader())).containsExactly("scanned-interface", "scanned-method",
                "scanned-type", "scanned-unloaded");
    }

    @Test
    void thePackagesAreThoseTheApplicationsComponentScansName() {
        DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
        beanFactory.registerBeanDefinition("byClass", new RootBeanDefinition(ScansByClass.class));
        beanFactory.registerBeanDefinition("own", new RootBeanDefinition(ScansItsOwnPackage.class));
        beanFactory.registerBeanDefinition("other", new RootBeanDefinition(String.class));
        assertThat(DeclaredResources.packages(beanFactory))
                .containsExactly("dev.fencing.spring.support", "dev.fencing.spring.support.declared");
    }
}
