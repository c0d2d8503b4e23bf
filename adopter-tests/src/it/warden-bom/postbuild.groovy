import javax.xml.parsers.DocumentBuilderFactory

// The checks every adopter project shares: one Netty version in the dependency tree.
new GroovyShell(binding).evaluate(new File(checks))

// And what importing warden-bom gives a user: the published BOM (as installed, the way a user's
// build reads it) has no parent and manages Warden's artifacts, Lettuce and the Netty, gRPC and
// protobuf BOMs only; no test library of Warden's parent.
def file = new File(localRepositoryPath, "dev/warden/warden-bom/${wardenVersion}/warden-bom-${wardenVersion}.pom")
assert file.isFile() : "no installed BOM at ${file}"
def doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file)
assert doc.getElementsByTagName('parent').length == 0 : "the published warden-bom has a parent: its dependencyManagement would reach users"
def managed = doc.getElementsByTagName('dependencyManagement').item(0).getElementsByTagName('dependency')
def entries = (0..<managed.length).collect { i ->
    def d = managed.item(i)
    def text = { tag -> d.getElementsByTagName(tag).length > 0 ? d.getElementsByTagName(tag).item(0).textContent : '' }
    "${text('groupId')}:${text('artifactId')}"
} as TreeSet
def expected = ['dev.warden:lock-api', 'dev.warden:warden-redis', 'dev.warden:lock-redis', 'dev.warden:lock-etcd', 'dev.warden:lock-zookeeper', 'dev.warden:lock-memory', 'dev.warden:lock-jdbc',
                'dev.warden:quota-core', 'dev.warden:quota-ledger', 'dev.warden:quota-ledger-cli', 'dev.warden:lock-cli', 'dev.warden:testkit', 'dev.warden:lock-tck',
                'dev.warden:warden-micrometer', 'dev.warden:warden-shedlock', 'dev.warden:warden-spring-integration', 'dev.warden:warden-reactor', 'dev.warden:warden-spring-boot3-compat', 'dev.warden:warden-spring-boot-starter', 'io.lettuce:lettuce-core',
                'io.netty:netty-bom', 'io.grpc:grpc-bom', 'com.google.protobuf:protobuf-bom'] as TreeSet
assert entries == expected : "warden-bom manages ${entries}, expected ${expected}"
println "[adopter] warden-bom: no parent; manages ${entries.size()} entries, Warden's, Lettuce and the Netty, gRPC and protobuf BOMs"
return true
