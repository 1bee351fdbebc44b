// swift-tools-version:6.0
// An app outside Ferry's tree, as an app developer writes it: Ferry by version.
// scripts/consumer-test puts FERRY_URL in place of the address before building.
import PackageDescription

let package = Package(
    name: "consumer",
    dependencies: [.package(url: "FERRY_URL", from: "FERRY_VERSION")],
    targets: [
        .executableTarget(name: "consumer", dependencies: [.product(name: "Ferry", package: "ferry")])
    ]
)
