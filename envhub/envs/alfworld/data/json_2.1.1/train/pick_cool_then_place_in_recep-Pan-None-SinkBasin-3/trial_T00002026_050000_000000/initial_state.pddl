
(define (problem plan_trial_T00002026_050000_000000)
    (:domain alfred)
    (:objects
        agent1 - agent
        Pan_bar__minus_01_dot_38_bar__plus_01_dot_73_bar__minus_02_dot_80 - object
        Cup_bar__minus_00_dot_52_bar__plus_01_dot_70_bar__plus_02_dot_13 - object
        Fork_bar__minus_00_dot_41_bar__plus_00_dot_95_bar__plus_02_dot_67 - object
        Apple_bar__minus_02_dot_02_bar__plus_01_dot_43_bar__minus_00_dot_84 - object
        Plate_bar__plus_01_dot_81_bar__plus_01_dot_27_bar__plus_00_dot_76 - object
        Bowl_bar__plus_00_dot_90_bar__plus_00_dot_09_bar__plus_00_dot_77 - object
        Spoon_bar__minus_00_dot_32_bar__plus_01_dot_33_bar__plus_02_dot_27 - object
        Tomato_bar__minus_00_dot_63_bar__plus_00_dot_65_bar__plus_01_dot_63 - object
        Kettle_bar__plus_01_dot_81_bar__plus_01_dot_46_bar__plus_00_dot_63 - object
        AppleType - otype
        BowlType - otype
        CupType - otype
        ForkType - otype
        KettleType - otype
        PanType - otype
        PlateType - otype
        SpoonType - otype
        TomatoType - otype
        CabinetType - rtype
        CounterTopType - rtype
        DrawerType - rtype
        FridgeType - rtype
        GarbageCanType - rtype
        MicrowaveType - rtype
        SideTableType - rtype
        SinkBasinType - rtype
        Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_78_bar__minus_02_dot_05 - receptacle
        Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__plus_00_dot_47 - receptacle
        Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__plus_01_dot_31 - receptacle
        Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__minus_02_dot_00 - receptacle
        CounterTop_bar__minus_01_dot_81_bar__plus_01_dot_36_bar__plus_01_dot_18 - receptacle
        Drawer_bar__plus_00_dot_71_bar__plus_00_dot_85_bar__plus_01_dot_02 - receptacle
        Drawer_bar__plus_00_dot_71_bar__plus_01_dot_06_bar__plus_01_dot_02 - receptacle
        Drawer_bar__plus_00_dot_72_bar__plus_00_dot_59_bar__plus_00_dot_68 - receptacle
        Drawer_bar__plus_00_dot_72_bar__plus_00_dot_59_bar__plus_01_dot_02 - receptacle
        Drawer_bar__plus_00_dot_72_bar__plus_00_dot_84_bar__plus_00_dot_68 - receptacle
        Drawer_bar__plus_00_dot_72_bar__plus_01_dot_06_bar__plus_00_dot_68 - receptacle
        Fridge_bar__plus_01_dot_01_bar__plus_00_dot_23_bar__plus_01_dot_92 - receptacle
        GarbageCan_bar__minus_01_dot_63_bar__plus_00_dot_22_bar__plus_02_dot_19 - receptacle
        Microwave_bar__plus_01_dot_16_bar__plus_01_dot_19_bar__plus_00_dot_85 - receptacle
        SideTable_bar__plus_01_dot_02_bar__plus_01_dot_24_bar__plus_00_dot_87 - receptacle
        Sink_bar__minus_01_dot_99_bar__plus_01_dot_14_bar__minus_00_dot_98_bar_SinkBasin - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar_0_bar_1_bar_1_bar_30 - location
        loc_bar_0_bar_3_bar_1_bar_30 - location
        loc_bar_0_bar_6_bar_1_bar_30 - location
        loc_bar_0_bar_8_bar_1_bar_0 - location
        loc_bar_1_bar_3_bar_1_bar_30 - location
        loc_bar_1_bar_4_bar_1_bar_30 - location
        loc_bar__minus_1_bar_0_bar_1_bar_30 - location
        loc_bar__minus_1_bar_2_bar_1_bar_30 - location
        loc_bar__minus_1_bar__minus_9_bar_1_bar_30 - location
        loc_bar__minus_2_bar_0_bar_3_bar_30 - location
        loc_bar__minus_2_bar_7_bar_3_bar_30 - location
        loc_bar__minus_2_bar__minus_6_bar_3_bar_30 - location
        loc_bar__minus_4_bar_5_bar_0_bar_30 - location
        loc_bar__minus_4_bar_5_bar_3_bar_30 - location
        loc_bar__minus_4_bar__minus_3_bar_3_bar_30 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_78_bar__minus_02_dot_05 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_78_bar__minus_02_dot_05 loc_bar__minus_1_bar__minus_9_bar_1_bar_30)
        (openable Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_78_bar__minus_02_dot_05)
        (receptacleType Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__plus_00_dot_47 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__plus_00_dot_47 loc_bar__minus_2_bar_0_bar_3_bar_30)
        (openable Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__plus_00_dot_47)
        (receptacleType Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__plus_01_dot_31 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__plus_01_dot_31 loc_bar__minus_2_bar_7_bar_3_bar_30)
        (openable Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__plus_01_dot_31)
        (receptacleType Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__minus_02_dot_00 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__minus_02_dot_00 loc_bar__minus_2_bar__minus_6_bar_3_bar_30)
        (openable Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__minus_02_dot_00)
        (receptacleType CounterTop_bar__minus_01_dot_81_bar__plus_01_dot_36_bar__plus_01_dot_18 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_01_dot_81_bar__plus_01_dot_36_bar__plus_01_dot_18 loc_bar__minus_4_bar_5_bar_3_bar_30)
        (receptacleType Drawer_bar__plus_00_dot_71_bar__plus_00_dot_85_bar__plus_01_dot_02 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_71_bar__plus_00_dot_85_bar__plus_01_dot_02 loc_bar_0_bar_6_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_71_bar__plus_00_dot_85_bar__plus_01_dot_02)
        (receptacleType Drawer_bar__plus_00_dot_71_bar__plus_01_dot_06_bar__plus_01_dot_02 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_71_bar__plus_01_dot_06_bar__plus_01_dot_02 loc_bar_0_bar_3_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_71_bar__plus_01_dot_06_bar__plus_01_dot_02)
        (receptacleType Drawer_bar__plus_00_dot_72_bar__plus_00_dot_59_bar__plus_00_dot_68 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_72_bar__plus_00_dot_59_bar__plus_00_dot_68 loc_bar__minus_1_bar_0_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_72_bar__plus_00_dot_59_bar__plus_00_dot_68)
        (receptacleType Drawer_bar__plus_00_dot_72_bar__plus_00_dot_59_bar__plus_01_dot_02 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_72_bar__plus_00_dot_59_bar__plus_01_dot_02 loc_bar__minus_1_bar_2_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_72_bar__plus_00_dot_59_bar__plus_01_dot_02)
        (receptacleType Drawer_bar__plus_00_dot_72_bar__plus_00_dot_84_bar__plus_00_dot_68 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_72_bar__plus_00_dot_84_bar__plus_00_dot_68 loc_bar_0_bar_1_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_72_bar__plus_00_dot_84_bar__plus_00_dot_68)
        (receptacleType Drawer_bar__plus_00_dot_72_bar__plus_01_dot_06_bar__plus_00_dot_68 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_72_bar__plus_01_dot_06_bar__plus_00_dot_68 loc_bar_0_bar_1_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_72_bar__plus_01_dot_06_bar__plus_00_dot_68)
        (receptacleType Fridge_bar__plus_01_dot_01_bar__plus_00_dot_23_bar__plus_01_dot_92 FridgeType)
        (receptacleAtLocation Fridge_bar__plus_01_dot_01_bar__plus_00_dot_23_bar__plus_01_dot_92 loc_bar_0_bar_8_bar_1_bar_0)
        (openable Fridge_bar__plus_01_dot_01_bar__plus_00_dot_23_bar__plus_01_dot_92)
        (receptacleType GarbageCan_bar__minus_01_dot_63_bar__plus_00_dot_22_bar__plus_02_dot_19 GarbageCanType)
        (receptacleAtLocation GarbageCan_bar__minus_01_dot_63_bar__plus_00_dot_22_bar__plus_02_dot_19 loc_bar__minus_4_bar_5_bar_0_bar_30)
        (receptacleType Microwave_bar__plus_01_dot_16_bar__plus_01_dot_19_bar__plus_00_dot_85 MicrowaveType)
        (receptacleAtLocation Microwave_bar__plus_01_dot_16_bar__plus_01_dot_19_bar__plus_00_dot_85 loc_bar_1_bar_3_bar_1_bar_30)
        (openable Microwave_bar__plus_01_dot_16_bar__plus_01_dot_19_bar__plus_00_dot_85)
        (receptacleType SideTable_bar__plus_01_dot_02_bar__plus_01_dot_24_bar__plus_00_dot_87 SideTableType)
        (receptacleAtLocation SideTable_bar__plus_01_dot_02_bar__plus_01_dot_24_bar__plus_00_dot_87 loc_bar_1_bar_4_bar_1_bar_30)
        (receptacleType Sink_bar__minus_01_dot_99_bar__plus_01_dot_14_bar__minus_00_dot_98_bar_SinkBasin SinkBasinType)
        (receptacleAtLocation Sink_bar__minus_01_dot_99_bar__plus_01_dot_14_bar__minus_00_dot_98_bar_SinkBasin loc_bar__minus_4_bar__minus_3_bar_3_bar_30)
        (canContain CabinetType BowlType)
        (canContain CabinetType CupType)
        (canContain CabinetType KettleType)
        (canContain CabinetType PanType)
        (canContain CabinetType PlateType)
        (canContain CounterTopType AppleType)
        (canContain CounterTopType BowlType)
        (canContain CounterTopType CupType)
        (canContain CounterTopType ForkType)
        (canContain CounterTopType KettleType)
        (canContain CounterTopType PanType)
        (canContain CounterTopType PlateType)
        (canContain CounterTopType SpoonType)
        (canContain CounterTopType TomatoType)
        (canContain DrawerType ForkType)
        (canContain DrawerType SpoonType)
        (canContain FridgeType AppleType)
        (canContain FridgeType BowlType)
        (canContain FridgeType CupType)
        (canContain FridgeType PanType)
        (canContain FridgeType PlateType)
        (canContain FridgeType TomatoType)
        (canContain GarbageCanType AppleType)
        (canContain GarbageCanType TomatoType)
        (canContain MicrowaveType AppleType)
        (canContain MicrowaveType BowlType)
        (canContain MicrowaveType CupType)
        (canContain MicrowaveType PlateType)
        (canContain MicrowaveType TomatoType)
        (canContain SideTableType AppleType)
        (canContain SideTableType BowlType)
        (canContain SideTableType CupType)
        (canContain SideTableType ForkType)
        (canContain SideTableType KettleType)
        (canContain SideTableType PanType)
        (canContain SideTableType PlateType)
        (canContain SideTableType SpoonType)
        (canContain SideTableType TomatoType)
        (canContain SinkBasinType AppleType)
        (canContain SinkBasinType BowlType)
        (canContain SinkBasinType CupType)
        (canContain SinkBasinType ForkType)
        (canContain SinkBasinType KettleType)
        (canContain SinkBasinType PanType)
        (canContain SinkBasinType PlateType)
        (canContain SinkBasinType SpoonType)
        (canContain SinkBasinType TomatoType)
        (objectType Pan_bar__minus_01_dot_38_bar__plus_01_dot_73_bar__minus_02_dot_80 PanType)
        (inReceptacle Pan_bar__minus_01_dot_38_bar__plus_01_dot_73_bar__minus_02_dot_80 Cabinet_bar__minus_01_dot_46_bar__plus_00_dot_78_bar__plus_00_dot_47)
        (objectAtLocation Pan_bar__minus_01_dot_38_bar__plus_01_dot_73_bar__minus_02_dot_80 loc_bar__minus_2_bar_0_bar_3_bar_30)
        (pickupable Pan_bar__minus_01_dot_38_bar__plus_01_dot_73_bar__minus_02_dot_80)
        (isReceptacleObject Pan_bar__minus_01_dot_38_bar__plus_01_dot_73_bar__minus_02_dot_80)
        (cleanable Pan_bar__minus_01_dot_38_bar__plus_01_dot_73_bar__minus_02_dot_80)
        (coolable Pan_bar__minus_01_dot_38_bar__plus_01_dot_73_bar__minus_02_dot_80)
        (objectType Cup_bar__minus_00_dot_52_bar__plus_01_dot_70_bar__plus_02_dot_13 CupType)
        (inReceptacle Cup_bar__minus_00_dot_52_bar__plus_01_dot_70_bar__plus_02_dot_13 Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_78_bar__minus_02_dot_05)
        (objectAtLocation Cup_bar__minus_00_dot_52_bar__plus_01_dot_70_bar__plus_02_dot_13 loc_bar__minus_1_bar__minus_9_bar_1_bar_30)
        (pickupable Cup_bar__minus_00_dot_52_bar__plus_01_dot_70_bar__plus_02_dot_13)
        (isReceptacleObject Cup_bar__minus_00_dot_52_bar__plus_01_dot_70_bar__plus_02_dot_13)
        (cleanable Cup_bar__minus_00_dot_52_bar__plus_01_dot_70_bar__plus_02_dot_13)
        (heatable Cup_bar__minus_00_dot_52_bar__plus_01_dot_70_bar__plus_02_dot_13)
        (coolable Cup_bar__minus_00_dot_52_bar__plus_01_dot_70_bar__plus_02_dot_13)
        (objectType Fork_bar__minus_00_dot_41_bar__plus_00_dot_95_bar__plus_02_dot_67 ForkType)
        (inReceptacle Fork_bar__minus_00_dot_41_bar__plus_00_dot_95_bar__plus_02_dot_67 Drawer_bar__plus_00_dot_72_bar__plus_00_dot_59_bar__plus_01_dot_02)
        (objectAtLocation Fork_bar__minus_00_dot_41_bar__plus_00_dot_95_bar__plus_02_dot_67 loc_bar__minus_1_bar_2_bar_1_bar_30)
        (pickupable Fork_bar__minus_00_dot_41_bar__plus_00_dot_95_bar__plus_02_dot_67)
        (cleanable Fork_bar__minus_00_dot_41_bar__plus_00_dot_95_bar__plus_02_dot_67)
        (objectType Apple_bar__minus_02_dot_02_bar__plus_01_dot_43_bar__minus_00_dot_84 AppleType)
        (inReceptacle Apple_bar__minus_02_dot_02_bar__plus_01_dot_43_bar__minus_00_dot_84 Sink_bar__minus_01_dot_99_bar__plus_01_dot_14_bar__minus_00_dot_98_bar_SinkBasin)
        (objectAtLocation Apple_bar__minus_02_dot_02_bar__plus_01_dot_43_bar__minus_00_dot_84 loc_bar__minus_4_bar__minus_3_bar_3_bar_30)
        (pickupable Apple_bar__minus_02_dot_02_bar__plus_01_dot_43_bar__minus_00_dot_84)
        (cleanable Apple_bar__minus_02_dot_02_bar__plus_01_dot_43_bar__minus_00_dot_84)
        (heatable Apple_bar__minus_02_dot_02_bar__plus_01_dot_43_bar__minus_00_dot_84)
        (coolable Apple_bar__minus_02_dot_02_bar__plus_01_dot_43_bar__minus_00_dot_84)
        (sliceable Apple_bar__minus_02_dot_02_bar__plus_01_dot_43_bar__minus_00_dot_84)
        (objectType Plate_bar__plus_01_dot_81_bar__plus_01_dot_27_bar__plus_00_dot_76 PlateType)
        (inReceptacle Plate_bar__plus_01_dot_81_bar__plus_01_dot_27_bar__plus_00_dot_76 Fridge_bar__plus_01_dot_01_bar__plus_00_dot_23_bar__plus_01_dot_92)
        (objectAtLocation Plate_bar__plus_01_dot_81_bar__plus_01_dot_27_bar__plus_00_dot_76 loc_bar_0_bar_8_bar_1_bar_0)
        (pickupable Plate_bar__plus_01_dot_81_bar__plus_01_dot_27_bar__plus_00_dot_76)
        (isReceptacleObject Plate_bar__plus_01_dot_81_bar__plus_01_dot_27_bar__plus_00_dot_76)
        (cleanable Plate_bar__plus_01_dot_81_bar__plus_01_dot_27_bar__plus_00_dot_76)
        (heatable Plate_bar__plus_01_dot_81_bar__plus_01_dot_27_bar__plus_00_dot_76)
        (coolable Plate_bar__plus_01_dot_81_bar__plus_01_dot_27_bar__plus_00_dot_76)
        (objectType Bowl_bar__plus_00_dot_90_bar__plus_00_dot_09_bar__plus_00_dot_77 BowlType)
        (inReceptacle Bowl_bar__plus_00_dot_90_bar__plus_00_dot_09_bar__plus_00_dot_77 Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_78_bar__minus_02_dot_05)
        (objectAtLocation Bowl_bar__plus_00_dot_90_bar__plus_00_dot_09_bar__plus_00_dot_77 loc_bar__minus_1_bar__minus_9_bar_1_bar_30)
        (pickupable Bowl_bar__plus_00_dot_90_bar__plus_00_dot_09_bar__plus_00_dot_77)
        (isReceptacleObject Bowl_bar__plus_00_dot_90_bar__plus_00_dot_09_bar__plus_00_dot_77)
        (cleanable Bowl_bar__plus_00_dot_90_bar__plus_00_dot_09_bar__plus_00_dot_77)
        (coolable Bowl_bar__plus_00_dot_90_bar__plus_00_dot_09_bar__plus_00_dot_77)
        (objectType Spoon_bar__minus_00_dot_32_bar__plus_01_dot_33_bar__plus_02_dot_27 SpoonType)
        (inReceptacle Spoon_bar__minus_00_dot_32_bar__plus_01_dot_33_bar__plus_02_dot_27 SideTable_bar__plus_01_dot_02_bar__plus_01_dot_24_bar__plus_00_dot_87)
        (objectAtLocation Spoon_bar__minus_00_dot_32_bar__plus_01_dot_33_bar__plus_02_dot_27 loc_bar_1_bar_4_bar_1_bar_30)
        (pickupable Spoon_bar__minus_00_dot_32_bar__plus_01_dot_33_bar__plus_02_dot_27)
        (cleanable Spoon_bar__minus_00_dot_32_bar__plus_01_dot_33_bar__plus_02_dot_27)
        (objectType Tomato_bar__minus_00_dot_63_bar__plus_00_dot_65_bar__plus_01_dot_63 TomatoType)
        (inReceptacle Tomato_bar__minus_00_dot_63_bar__plus_00_dot_65_bar__plus_01_dot_63 SideTable_bar__plus_01_dot_02_bar__plus_01_dot_24_bar__plus_00_dot_87)
        (objectAtLocation Tomato_bar__minus_00_dot_63_bar__plus_00_dot_65_bar__plus_01_dot_63 loc_bar_1_bar_4_bar_1_bar_30)
        (pickupable Tomato_bar__minus_00_dot_63_bar__plus_00_dot_65_bar__plus_01_dot_63)
        (cleanable Tomato_bar__minus_00_dot_63_bar__plus_00_dot_65_bar__plus_01_dot_63)
        (heatable Tomato_bar__minus_00_dot_63_bar__plus_00_dot_65_bar__plus_01_dot_63)
        (coolable Tomato_bar__minus_00_dot_63_bar__plus_00_dot_65_bar__plus_01_dot_63)
        (sliceable Tomato_bar__minus_00_dot_63_bar__plus_00_dot_65_bar__plus_01_dot_63)
        (objectType Kettle_bar__plus_01_dot_81_bar__plus_01_dot_46_bar__plus_00_dot_63 KettleType)
        (inReceptacle Kettle_bar__plus_01_dot_81_bar__plus_01_dot_46_bar__plus_00_dot_63 Sink_bar__minus_01_dot_99_bar__plus_01_dot_14_bar__minus_00_dot_98_bar_SinkBasin)
        (objectAtLocation Kettle_bar__plus_01_dot_81_bar__plus_01_dot_46_bar__plus_00_dot_63 loc_bar__minus_4_bar__minus_3_bar_3_bar_30)
        (pickupable Kettle_bar__plus_01_dot_81_bar__plus_01_dot_46_bar__plus_00_dot_63)
        (cleanable Kettle_bar__plus_01_dot_81_bar__plus_01_dot_46_bar__plus_00_dot_63)
        )

        (:goal
            (and
                (exists (?r - receptacle)
                    (exists (?o - object)
                        (and
                            (coolable ?o)
                            (objectType ?o PanType)
                            (receptacleType ?r SinkBasinType)
                            (isCool ?o)
                            (inReceptacle ?o ?r)
                        )
                    )
                )
            )
        )
    )
    
